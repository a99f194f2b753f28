use shape_crate::reverse_words;

#[test]
fn empty() {
    assert_eq!(reverse_words(""), "");
}

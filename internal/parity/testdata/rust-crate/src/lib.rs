/// Reverses the words of a sentence.
pub fn reverse_words(s: &str) -> String {
    s.split_whitespace().rev().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverses() {
        assert_eq!(reverse_words("a b c"), "c b a");
    }

    #[test]
    #[ignore]
    fn slow_case() {}
}

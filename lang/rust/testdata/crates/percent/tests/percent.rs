use percent::percent;

#[test]
fn half() {
    assert_eq!(percent(1, 2), 50);
}

#[test]
fn over_is_clamped() {
    assert_eq!(percent(5, 2), 100);
}

#[test]
fn quarter() {
    assert_eq!(percent(25, 100), 25);
}

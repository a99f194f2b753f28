use mixed::{add, sub};

#[test]
fn adds() {
    assert_eq!(add(2, 3), 5);
}

#[test]
fn subtracts() {
    assert_eq!(sub(10, 4), 6, "ten minus four");
}

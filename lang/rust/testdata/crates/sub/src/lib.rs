//! Arithmetic whose tests live next to it, in a #[cfg(test)] module.

/// Returns a minus b.
pub fn sub(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtracts() {
        assert_eq!(sub(5, 3), 2);
    }

    #[test]
    fn negative() {
        assert_eq!(sub(3, 5), -2);
    }
}

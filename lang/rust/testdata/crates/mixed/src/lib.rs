//! A crate whose tests pass, fail, panic and are ignored, in every kind of
//! test binary cargo runs.

/// Adds two numbers.
///
/// ```
/// assert_eq!(mixed::add(2, 2), 4);
/// ```
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

/// Subtracts, wrongly.
///
/// ```
/// assert_eq!(mixed::sub(5, 3), 2);
/// ```
pub fn sub(a: i32, b: i32) -> i32 {
    a + b
}

/// Never compiled as a test.
///
/// ```ignore
/// this is not rust
/// ```
pub fn nothing() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 2), 3);
    }

    #[test]
    fn subtracts() {
        assert_eq!(sub(5, 3), 2);
    }

    #[test]
    fn message() {
        assert!(sub(1, 1) == 0, "sub(1, 1) was {}", sub(1, 1));
    }

    #[test]
    #[ignore]
    fn slow() {
        loop {}
    }

    #[test]
    #[should_panic(expected = "boom")]
    fn panics() {
        panic!("boom");
    }

    #[test]
    #[should_panic]
    fn does_not_panic() {}

    #[test]
    fn unwraps() {
        let v: Result<i32, String> = Err("bad input".to_string());
        v.unwrap();
    }

    #[test]
    fn prints() {
        println!("hello from the test");
        assert_eq!(vec![1, 2], vec![1, 3]);
    }

    mod nested {
        #[test]
        fn deep() {
            assert_eq!(super::super::add(0, 0), 0);
        }
    }
}

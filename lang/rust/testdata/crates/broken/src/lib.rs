pub fn half(x: i32) -> i32 {
    let s: String = x / 2;
    s
}

pub fn twice(x: i32) -> i32 {
    x * undefined_name
}

#[cfg(test)]
mod tests {
    #[test]
    fn halves() {
        assert_eq!(super::half(4), 2);
    }
}

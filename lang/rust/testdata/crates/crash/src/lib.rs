pub fn depth(n: u64) -> u64 {
    if n == 0 { 0 } else { 1 + depth(n - 1) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fine() {
        assert_eq!(super::depth(3), 3);
    }

    #[test]
    fn aborts() {
        std::process::abort();
    }
}

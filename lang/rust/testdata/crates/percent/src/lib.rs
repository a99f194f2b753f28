//! Percentages, clamped to 0..=100 by the vendored tinyclamp crate.

/// The share of `part` in `whole` in whole percent, rounded down and
/// clamped to 0..=100. A `whole` of zero gives 0.
pub fn percent(part: u32, whole: u32) -> u32 {
    if whole == 0 {
        return 0;
    }
    tinyclamp::clamp(part * 100 / whole, 0, 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_whole() {
        assert_eq!(percent(3, 0), 0);
    }

    #[test]
    fn small() {
        assert_eq!(percent(1, 20), 5);
    }
}

//! Clamp a value into a range.

/// Returns `x` limited to `lo..=hi`.
pub fn clamp<T: PartialOrd>(x: T, lo: T, hi: T) -> T {
    if x < lo {
        lo
    } else if x > hi {
        hi
    } else {
        x
    }
}

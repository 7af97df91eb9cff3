//! "Did you mean …?" suggestions for misspelt names.
//!
//! [`did_you_mean`] picks the candidate with the smallest case-insensitive edit
//! distance (with transpositions) to the misspelt name, provided that distance is at most `max(1, len / 3)`
//! (`len` = number of characters of the misspelt name). Ties go to the candidate that
//! comes first. [`hint`] formats the result as a suffix for error messages.

/// Case-insensitive edit distance between `a` and `b`, counted in chars: insertions,
/// deletions, substitutions and transpositions of two adjacent chars each cost 1 (the
/// optimal-string-alignment variant of Damerau–Levenshtein, so `Gian` is one edit from
/// `Gain`).
pub fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().flat_map(char::to_lowercase).collect();
    let b: Vec<char> = b.chars().flat_map(char::to_lowercase).collect();
    // Three rows: pp = distance row i-1, prev = row i, cur = row i+1.
    let mut pp: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0usize; b.len() + 1];
    for i in 0..a.len() {
        cur[0] = i + 1;
        for j in 0..b.len() {
            let subst = prev[j] + usize::from(a[i] != b[j]);
            let delete = prev[j + 1] + 1;
            let insert = cur[j] + 1;
            let mut best = subst.min(delete).min(insert);
            if i > 0 && j > 0 && a[i] == b[j - 1] && a[i - 1] == b[j] {
                best = best.min(pp[j - 1] + 1);
            }
            cur[j + 1] = best;
        }
        std::mem::swap(&mut pp, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `name`, if it is close enough to be a plausible typo.
///
/// Comparison is case-insensitive; the accepted distance is `max(1, len / 3)` where `len`
/// is the char count of `name`. On equal distance the earliest candidate wins.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for cand in candidates {
        let d = levenshtein(name, cand);
        let better = match best {
            Some((bd, _)) => d < bd,
            None => true,
        };
        if d <= limit && better {
            best = Some((d, cand));
        }
    }
    best.map(|(_, c)| c)
}

/// `" (did you mean 'x'?)"` for the best suggestion, or `""` when there is none.
pub fn hint<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    match did_you_mean(name, candidates) {
        Some(c) => format!(" (did you mean '{c}'?)"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(levenshtein("", ""), 0);
        assert_eq!(levenshtein("abc", ""), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("KW", "kw"), 0);
        assert_eq!(levenshtein("flaw", "lawn"), 2);
        assert_eq!(levenshtein("µm", "um"), 1);
    }

    #[test]
    fn suggestions() {
        let c = ["J1", "J2", "k_shaft", "gear_ratio"];
        assert_eq!(did_you_mean("J3", c), Some("J1")); // tie: first wins
        assert_eq!(did_you_mean("k_shaf", c), Some("k_shaft"));
        assert_eq!(did_you_mean("gearratio", c), Some("gear_ratio"));
        assert_eq!(did_you_mean("GEAR_RATIO", c), Some("gear_ratio"));
        assert_eq!(did_you_mean("xyz", c), None);
        assert_eq!(did_you_mean("anything", std::iter::empty()), None);
        // limit is max(1, len/3): a one-char name may still be one edit away
        assert_eq!(did_you_mean("x", ["y"]), Some("y"));
        assert_eq!(did_you_mean("ab", ["cd"]), None);
        assert_eq!(did_you_mean("rpn", ["rad", "rpm", "rev"]), Some("rpm"));
    }

    #[test]
    fn hints() {
        assert_eq!(hint("J2", ["J1"]), " (did you mean 'J1'?)");
        assert_eq!(hint("zzz", ["J1"]), "");
        let owned = ["alpha".to_string(), "beta".to_string()];
        assert_eq!(
            hint("alpa", owned.iter().map(String::as_str)),
            " (did you mean 'alpha'?)"
        );
    }
}

//! "Did you mean …?" suggestions for misspelt names.
//!
//! [`did_you_mean`] picks the candidate with the smallest case-insensitive edit
//! distance (with transpositions) to the misspelt name, provided that distance is at most
//! `max(1, len / 3)` (`len` = number of characters of the misspelt name); ties go to the
//! candidate that comes first. When no candidate is that close it falls back to word
//! parts ([`by_words`]): `FrictionClutch` is no typo of `Clutch` (8 edits) but shares a
//! word with it. [`hint`] formats the result as a suffix for error messages.
//!
//! Word matching:
//! - a name is split into words at `_`, `-`, `.`, `/`, spaces, lower-to-upper case changes,
//!   the end of an acronym (`ABSController` → `abs`, `controller`) and letter/digit changes;
//!   words are compared in lower case; words of fewer than 3 characters are ignored;
//! - a word of the name matches a word of a candidate when they are equal, when both have at
//!   least 4 characters and their edit distance is at most `len / 3` (`cluth` ~ `clutch`),
//!   or when the shorter has at least 4 characters and the longer starts with it
//!   (`gearbox` ~ `gear`);
//! - the candidate matching the most words of the name wins; ties go to the candidate with
//!   the fewest unmatched words of its own (`FrictionClutch` → `Clutch` rather than
//!   `OneWayClutch`), then to the earliest.

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

/// The suggestion for a misspelt `name`: a close typo first, else the best word match.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    by_distance(name, candidates.iter().copied()).or_else(|| by_words(name, &candidates))
}

/// The candidate closest to `name`, if it is close enough to be a plausible typo.
///
/// Comparison is case-insensitive; the accepted distance is `max(1, len / 3)` where `len`
/// is the char count of `name`. On equal distance the earliest candidate wins.
pub fn by_distance<'a>(
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

/// Shortest word (in characters) that takes part in word matching.
const MIN_WORD: usize = 3;

/// The words of an identifier, in lower case (see the module docs for the split rules).
pub fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if let Some(&p) = i.checked_sub(1).and_then(|j| chars.get(j)) {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase() && c.is_uppercase() && next_lower)
                || (p.is_alphabetic() && c.is_numeric())
                || (p.is_numeric() && c.is_alphabetic());
            if boundary && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether word `a` of the misspelt name matches word `b` of a candidate.
fn word_match(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (la, lb) = (a.chars().count(), b.chars().count());
    if la >= 4 && lb >= 4 && levenshtein(a, b) <= la / 3 {
        return true;
    }
    let (short, long, ls) = if la <= lb { (a, b, la) } else { (b, a, lb) };
    ls >= 4 && long.starts_with(short)
}

/// The candidate sharing the most words with `name`, if any shares one.
pub fn by_words<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let mine: Vec<String> = words(name)
        .into_iter()
        .filter(|w| w.chars().count() >= MIN_WORD)
        .collect();
    if mine.is_empty() {
        return None;
    }
    // (matched words of the name, unmatched words of the candidate), best so far.
    let mut best: Option<(usize, usize, &'a str)> = None;
    for &cand in candidates {
        let theirs = words(cand);
        let matched = mine
            .iter()
            .filter(|w| theirs.iter().any(|t| word_match(w, t)))
            .count();
        if matched == 0 {
            continue;
        }
        let unmatched = theirs
            .iter()
            .filter(|t| !mine.iter().any(|w| word_match(w, t)))
            .count();
        let better = match best {
            None => true,
            Some((m, u, _)) => matched > m || (matched == m && unmatched < u),
        };
        if better {
            best = Some((matched, unmatched, cand));
        }
    }
    best.map(|(_, _, c)| c)
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

    #[test]
    fn words_split_camel_case_acronyms_digits_and_separators() {
        assert_eq!(words("FrictionClutch"), ["friction", "clutch"]);
        assert_eq!(words("OneWayClutch"), ["one", "way", "clutch"]);
        assert_eq!(words("ABSController"), ["abs", "controller"]);
        assert_eq!(words("CrCr4Speed"), ["cr", "cr", "4", "speed"]);
        assert_eq!(words("clutch_pack"), ["clutch", "pack"]);
        assert_eq!(words("gearbox.A_mode"), ["gearbox", "a", "mode"]);
        assert_eq!(words("PID"), ["pid"]);
        assert_eq!(words("m/s^2"), ["m", "s", "2"]);
        assert!(words("").is_empty());
    }

    fn types() -> Vec<&'static str> {
        vec![
            "Abs",
            "Brake",
            "Clutch",
            "IdealGear",
            "IdealRollingWheel",
            "OneWayClutch",
            "PlanetaryGear",
            "Tire",
            "TorqueConverter",
            "TorqueSensor",
            "TorqueSource",
        ]
    }

    #[test]
    fn friction_clutch_suggests_clutch() {
        assert_eq!(did_you_mean("FrictionClutch", types()), Some("Clutch"));
        assert_eq!(did_you_mean("friction_clutch", types()), Some("Clutch"));
        // a typo inside a word part
        assert_eq!(did_you_mean("FrictionCluth", types()), Some("Clutch"));
        assert_eq!(did_you_mean("DiscBrake", types()), Some("Brake"));
        assert_eq!(did_you_mean("Wheel", types()), Some("IdealRollingWheel"));
        assert_eq!(did_you_mean("ABSController", types()), Some("Abs"));
        assert_eq!(
            did_you_mean("TorqueConverterLockup", types()),
            Some("TorqueConverter")
        );
        assert_eq!(did_you_mean("Gearbox", types()), Some("IdealGear"));
    }

    #[test]
    fn typos_still_go_through_the_edit_distance_first() {
        assert_eq!(did_you_mean("Tyre", types()), Some("Tire"));
        assert_eq!(did_you_mean("clutch", types()), Some("Clutch"));
        assert_eq!(
            hint("Brak", types()),
            " (did you mean 'Brake'?)".to_string()
        );
    }

    #[test]
    fn no_shared_word_gives_no_suggestion() {
        assert_eq!(did_you_mean("Spaceship", types()), None);
        // short words (block-name prefixes such as J1) never match on their own
        assert_eq!(did_you_mean("J1.speed", ["J1.w", "J1.phi", "J1.a"]), None);
        assert_eq!(hint("xyz", types()), "");
        assert_eq!(did_you_mean("FrictionClutch", std::iter::empty()), None);
    }
}

//! "Did you mean …?" for the command line, on word parts as well as typos.
//!
//! [`drivelink_core::suggest::did_you_mean`] catches typos (a small edit distance over the
//! whole name). A name such as `FrictionClutch` is no typo of `Clutch` (8 edits) but shares
//! a word with it; [`did_you_mean`] falls back to matching words when the edit distance finds
//! nothing. This is the change proposed for `core/src/suggest.rs` (so that netlist errors
//! such as an unknown block type get it too); until then the CLI's own suggestion paths
//! (`blocks TYPE`, `--set`, `plot --signals`, `plot --unit`) use this module.
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

use drivelink_core::suggest;

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
    if la >= 4 && lb >= 4 && suggest::levenshtein(a, b) <= la / 3 {
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

/// The suggestion for a misspelt `name`: a close typo first, else the best word match.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    suggest::did_you_mean(name, candidates.iter().copied()).or_else(|| by_words(name, &candidates))
}

/// `" (did you mean 'x'?)"` for the best suggestion, or `""`.
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

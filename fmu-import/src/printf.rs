//! The `printf` formatting of FMI 2.0 log messages (the logger callback is variadic): the
//! conversions FMUs use in messages (`%s %d %i %u %x %X %o %c %p %f %F %e %E %g %G %%`,
//! with the `h`, `l`, `ll`, `z`, `j`, `t` length modifiers), flags, width and precision
//! read and applied simply (precision of floating-point conversions, width as padding).
//! The arguments come from two queues, as the x86-64 C calling convention passes them:
//! integers and pointers, and floating-point numbers. A conversion whose argument is
//! missing is kept as written.

/// Format `fmt`, taking integer and pointer arguments from `ints`, floating-point ones
/// from `floats`; `text` reads a `%s` argument (a C string pointer).
pub fn format(
    fmt: &str,
    ints: &mut dyn Iterator<Item = u64>,
    floats: &mut dyn Iterator<Item = f64>,
    text: &dyn Fn(u64) -> String,
) -> String {
    let mut out = String::with_capacity(fmt.len());
    let mut chars = fmt.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut left = false;
        while let Some(&(_, f)) = chars.peek() {
            if !"-+ #0".contains(f) {
                break;
            }
            left |= f == '-';
            chars.next();
        }
        let mut width = 0usize;
        while let Some(&(_, d)) = chars.peek().filter(|(_, d)| d.is_ascii_digit()) {
            width = width
                .saturating_mul(10)
                .saturating_add(d as usize - '0' as usize);
            chars.next();
        }
        let mut precision = None;
        if chars.peek().map(|p| p.1) == Some('.') {
            chars.next();
            let mut p = 0usize;
            while let Some(&(_, d)) = chars.peek().filter(|(_, d)| d.is_ascii_digit()) {
                p = p
                    .saturating_mul(10)
                    .saturating_add(d as usize - '0' as usize);
                chars.next();
            }
            precision = Some(p.min(30));
        }
        let mut long = false;
        while let Some(&(_, m)) = chars.peek() {
            if !"hlzjtL".contains(m) {
                break;
            }
            long |= "lzjt".contains(m);
            chars.next();
        }
        let Some((end, conv)) = chars.next() else {
            out.push_str(&fmt[start..]);
            break;
        };
        let written = &fmt[start..end + conv.len_utf8()];
        let int = |v: u64| {
            if long {
                v as i64
            } else {
                v as u32 as i32 as i64
            }
        };
        let uint = |v: u64| if long { v } else { v as u32 as u64 };
        let value = match conv {
            '%' => Some("%".to_string()),
            's' => ints.next().map(text),
            'd' | 'i' => ints.next().map(|v| int(v).to_string()),
            'u' => ints.next().map(|v| uint(v).to_string()),
            'x' => ints.next().map(|v| format!("{:x}", uint(v))),
            'X' => ints.next().map(|v| format!("{:X}", uint(v))),
            'o' => ints.next().map(|v| format!("{:o}", uint(v))),
            'p' => ints.next().map(|v| format!("{v:#x}")),
            'c' => ints
                .next()
                .map(|v| char::from_u32(v as u32 & 0xff).unwrap_or('?').to_string()),
            'f' | 'F' => floats
                .next()
                .map(|v| format!("{v:.*}", precision.unwrap_or(6))),
            'e' | 'E' => floats.next().map(|v| {
                let s = format!("{v:.*e}", precision.unwrap_or(6));
                if conv == 'E' {
                    s.to_uppercase()
                } else {
                    s
                }
            }),
            'g' | 'G' => floats.next().map(|v| match precision {
                Some(p) => format!("{v:.*}", p),
                None => v.to_string(),
            }),
            _ => None,
        };
        let Some(v) = value else {
            out.push_str(written);
            continue;
        };
        let pad = width.saturating_sub(v.chars().count());
        if !left {
            out.push_str(&" ".repeat(pad));
        }
        out.push_str(&v);
        if left {
            out.push_str(&" ".repeat(pad));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(f: &str, ints: &[u64], floats: &[f64]) -> String {
        let texts = ["world", "x"];
        format(
            f,
            &mut ints.iter().copied(),
            &mut floats.iter().copied(),
            &|p| {
                texts
                    .get(p as usize)
                    .map_or("(null)".into(), |s| s.to_string())
            },
        )
    }

    #[test]
    fn conversions_take_their_arguments_from_the_right_queue() {
        assert_eq!(fmt("hello %s!", &[0], &[]), "hello world!");
        assert_eq!(
            fmt("k = %g must be >= %d (%s)", &[0xffff_ffff, 1], &[-1.5]),
            "k = -1.5 must be >= -1 (x)"
        );
        assert_eq!(fmt("%ld %lu %x", &[u64::MAX, 7, 255], &[]), "-1 7 ff");
        assert_eq!(
            fmt("%.3f|%8.2e|%-4d|", &[5], &[2.71239, 1234.5]),
            "2.712|  1.23e3|5   |"
        );
        assert_eq!(fmt("100%% done", &[], &[]), "100% done");
    }

    #[test]
    fn missing_arguments_and_unknown_conversions_are_kept_as_written() {
        assert_eq!(fmt("%s and %d", &[0], &[]), "world and %d");
        assert_eq!(fmt("%q %", &[], &[]), "%q %");
    }
}

//! Numbers as text: [`Num`], the text `results.csv` writes for a number (the shortest that
//! reads back to the same `f64`, laid out as Rust's formatting lays it out, from zmij's
//! digits), and [`round_significant`], a number rounded to a count of significant digits
//! as its `{:.Ne}` text reads back (the report's samples).

/// A number as the CSV files write it: the shortest text that reads back to the same
/// `f64`, with an exponent outside `1e-5 ≤ |v| < 1e16` (`1e-300`, never 300 digits), and
/// zero (also −0, a force that is zero on the negative side) as `0`. The text is Rust's
/// `{}` inside that range and `{:e}` outside it, character for character.
pub struct Num(pub f64);

impl Num {
    /// Append the text to `out` (`digits`: scratch for the shortest digits, reused).
    pub fn push_to(&self, out: &mut Vec<u8>, digits: &mut zmij::Buffer) {
        let v = self.0;
        if v == 0.0 {
            out.push(b'0');
            return;
        }
        if !v.is_finite() {
            out.extend_from_slice(if v.is_nan() {
                b"NaN"
            } else if v > 0.0 {
                b"inf"
            } else {
                b"-inf"
            });
            return;
        }
        let a = v.abs();
        // A whole number below 2^53 (a mode, a gear, a count) is its integer's digits: its
        // neighbours are whole numbers too, so no shorter text reads back to it.
        if a <= 9_007_199_254_740_992.0 {
            let i = v as i64;
            if i as f64 == v {
                let mut t = [0u8; 20];
                let mut at = t.len();
                let mut u = i.unsigned_abs();
                while u > 0 {
                    at -= 1;
                    t[at] = b'0' + (u % 10) as u8;
                    u /= 10;
                }
                if i < 0 {
                    at -= 1;
                    t[at] = b'-';
                }
                out.extend_from_slice(&t[at..]);
                return;
            }
        }
        let positional = (1e-5..1e16).contains(&a);
        if !maybe_halfway(a) {
            // zmij writes the same digits as Rust's formatting, and its own layout is
            // Rust's but for a trailing ".0" on whole numbers and a "+" in positive
            // exponents; where it chose the other notation, lay the digits out below.
            let text = digits.format_finite(v).as_bytes();
            let e = text.iter().position(|&c| c == b'e');
            match (positional, e) {
                (true, None) => {
                    out.extend_from_slice(text.strip_suffix(b".0").unwrap_or(text));
                    return;
                }
                (false, Some(i)) => {
                    out.extend_from_slice(&text[..=i]);
                    let rest = &text[i + 1..];
                    out.extend_from_slice(rest.strip_prefix(b"+").unwrap_or(rest));
                    return;
                }
                _ => {}
            }
        }
        let (d, k) = shortest(a, digits);
        let d = &d.0[..d.1];
        if halfway_above(a, d, k) {
            // Two shortest texts equally near: zmij takes the even last digit, Rust's
            // formatting the upper one. Rare (a value whose exact decimal expansion has
            // one digit more, a 5): written as Rust writes it.
            let text = if (1e-5..1e16).contains(&a) {
                format!("{v}")
            } else {
                format!("{v:e}")
            };
            out.extend_from_slice(text.as_bytes());
            return;
        }
        // At most a sign, "0.", four zeros and 17 digits, or 17 digits, a point and
        // "e-324".
        let mut t = [0u8; 32];
        let mut n = 0;
        let mut put = |bytes: &[u8]| {
            t[n..n + bytes.len()].copy_from_slice(bytes);
            n += bytes.len();
        };
        if v < 0.0 {
            put(b"-");
        }
        if positional {
            // Positional: `k` digits before the point.
            if k <= 0 {
                put(b"0.");
                put(&b"0000"[..(-k) as usize]);
                put(d);
            } else if (k as usize) < d.len() {
                put(&d[..k as usize]);
                put(b".");
                put(&d[k as usize..]);
            } else {
                put(d);
                put(&b"0000000000000000"[..k as usize - d.len()]);
            }
        } else {
            put(&d[..1]);
            if d.len() > 1 {
                put(b".");
                put(&d[1..]);
            }
            put(b"e");
            let e = k - 1;
            if e < 0 {
                put(b"-");
            }
            let e = e.unsigned_abs();
            if e >= 100 {
                put(&[b'0' + (e / 100) as u8]);
            }
            if e >= 10 {
                put(&[b'0' + (e / 10 % 10) as u8]);
            }
            put(&[b'0' + (e % 10) as u8]);
        }
        out.extend_from_slice(&t[..n]);
    }
}

/// The shortest digits that read back to a finite positive `v` (without leading or
/// trailing zeros, at most 17) and the position of the decimal point: the value is
/// `0.d₁d₂… × 10^k`. Read off zmij's text (`"12.34"`, `"0.001234"`, `"1.234e33"`,
/// `"1e-7"`: digits, an optional point, an optional exponent).
fn shortest(v: f64, buf: &mut zmij::Buffer) -> (([u8; 17], usize), i32) {
    let text = buf.format_finite(v).as_bytes();
    let mut d = [0u8; 17];
    let mut len = 0;
    // Digits before the point (less the leading zeros after it), and the exponent.
    let mut k = 0i32;
    let mut seen_point = false;
    let mut exp = 0i32;
    let mut at = 0;
    while at < text.len() {
        let c = text[at];
        at += 1;
        match c {
            b'.' => seen_point = true,
            b'e' => {
                exp = exponent(&text[at..]);
                break;
            }
            b'0' if len == 0 => {
                // A leading zero moves the point, not the digits.
                if seen_point {
                    k -= 1;
                }
            }
            _ => {
                if !seen_point {
                    k += 1;
                }
                if len < d.len() {
                    d[len] = c;
                    len += 1;
                }
            }
        }
    }
    while len > 1 && d[len - 1] == b'0' {
        len -= 1;
    }
    ((d, len), k + exp)
}

/// `v` rounded to `n` significant digits (1 to 17), as its text with `n` digits reads
/// back: the same `f64` as `format!("{v:.(n−1)e}").parse()`, to the bit. From the
/// shortest digits: a value with at most `n` of them is its own rounding; otherwise the
/// digits are rounded and the result is one correctly rounded product or quotient of two
/// exact doubles. A value whose digits lie too near the halfway point (where the shortest
/// digits and the exact value could round apart) or whose rounding needs a power of ten
/// beyond 10^22 goes through the text.
pub fn round_significant(v: f64, n: usize) -> f64 {
    let by_text = || {
        format!("{v:.prec$e}", prec = n.saturating_sub(1))
            .parse()
            .unwrap_or(v)
    };
    if !v.is_finite() || v == 0.0 || !(1..=17).contains(&n) {
        return by_text();
    }
    let ((d, len), k) = shortest(v.abs(), &mut zmij::Buffer::new());
    if len <= n {
        // The n-digit text is these digits and zeros: it reads back to `v`.
        return v;
    }
    let digits =
        |r: std::ops::Range<usize>| d[r].iter().fold(0u64, |x, &c| x * 10 + u64::from(c - b'0'));
    // The tail after the n-th digit as `t` of `10^m`, against its half: the exact value
    // is within 2^-53 of the shortest digits, under 1.2e-16·10^n tail units, so a tail
    // farther than 10^(n−15) of the half rounds the same way as the exact value.
    let m = len - n;
    let t = u128::from(digits(n..len));
    let half = 5 * 10u128.pow(m as u32 - 1);
    if t.abs_diff(half) * 10u128.pow(15 - n.min(15) as u32) <= 10u128.pow(m as u32) * 10 {
        return by_text();
    }
    let mut mant = digits(0..n) + u64::from(t > half);
    let mut e = k - n as i32;
    if mant == 10u64.pow(n as u32) {
        mant /= 10;
        e += 1;
    }
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let r = match e {
        0..=22 => mant as f64 * POW10[e as usize],
        -22..=-1 => mant as f64 / POW10[(-e) as usize],
        _ => return by_text(),
    };
    if v < 0.0 {
        -r
    } else {
        r
    }
}

/// A decimal exponent as zmij writes it (`-7`, `33`, `+33`).
fn exponent(text: &[u8]) -> i32 {
    let (neg, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let e = digits
        .iter()
        .fold(0i32, |e, &c| e * 10 + i32::from(c - b'0'));
    if neg {
        -e
    } else {
        e
    }
}

/// The odd binary significand and the exponent of `v` (> 0, finite): `v = m·2^e2`.
fn odd_significand(v: f64) -> (u64, i32) {
    let bits = v.to_bits();
    let frac = bits & ((1u64 << 52) - 1);
    let biased = (bits >> 52) as i32;
    let (m, e2) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), biased - 1075)
    };
    let tz = m.trailing_zeros();
    (m >> tz, e2 + tz as i32)
}

/// Whether `v` (> 0, finite) could lie halfway between two shortest texts (see
/// [`halfway_above`]): only a value with at most 25 binary places and at most 22 binary
/// zeros at its end can.
fn maybe_halfway(v: f64) -> bool {
    (-25..=22).contains(&odd_significand(v).1)
}

/// Whether `v` (> 0, finite) lies exactly halfway between the digits `d` (with the point
/// at `k`) and the next text up, `d` with its last digit one more: whether its exact value
/// is `N·10^E` with `N` = `d` followed by a 5 and `E = k − len(d) − 1`. Checked on the odd
/// binary significand `m·2^e2` of `v`; a value with more than 25 binary places (almost
/// every one) has a longer exact expansion and is never halfway.
fn halfway_above(v: f64, d: &[u8], k: i32) -> bool {
    let (m, e2) = odd_significand(v);
    // N < 10^18 < 5^26: a quotient by 5^p needs p <= 25, and a product N·5^E below 2^53
    // needs E <= 22.
    if !(-25..=22).contains(&e2) {
        return false;
    }
    let n = d.iter().fold(0u64, |n, &c| n * 10 + u64::from(c - b'0')) * 10 + 5;
    let e = k - d.len() as i32 - 1;
    if e >= 0 {
        // N·5^E·2^E with N·5^E odd: the significand is N·5^E and the exponent E.
        e2 == e && u128::from(n) * 5u128.pow(e as u32) == u128::from(m)
    } else {
        // N / (5^p·2^p): N must hold 5^p; the odd part of N / 5^p is the significand.
        let p = (-e) as u32;
        if p > 25 {
            return false;
        }
        let five = 5u64.pow(p);
        if n % five != 0 {
            return false;
        }
        let q = n / five;
        let qz = q.trailing_zeros();
        m == q >> qz && e2 == qz as i32 - p as i32
    }
}

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = Vec::with_capacity(32);
        self.push_to(&mut out, &mut zmij::Buffer::new());
        // The text is ASCII.
        f.write_str(std::str::from_utf8(&out).map_err(|_| std::fmt::Error)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text `Num` wrote when it went through Rust's formatting: `{}` inside
    /// `1e-5 ≤ |v| < 1e16`, `{:e}` outside, `0` for either zero.
    fn formatted(v: f64) -> String {
        if v == 0.0 {
            "0".into()
        } else if !v.is_finite() || (1e-5..1e16).contains(&v.abs()) {
            format!("{v}")
        } else {
            format!("{v:e}")
        }
    }

    /// A xorshift64 stream of test values from `seed` (not 0).
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    #[test]
    fn a_number_rounded_to_significant_digits_is_its_text_read_back() {
        // The report's 6 and 9 digits (and every other count) against the text read back,
        // bit for bit: random bit patterns, run-sized values, halfway digits, carries.
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            1.0 / 3.0,
            47.49206510819189,
            -1234567.0,
            9.530_581e-16,
            999999.5,
            9999995.0,
            0.12345650000000001,
            0.1234565,
            0.123456499999,
            1e22,
            1e23,
            1e-22,
            1e-23,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            12.340000000000002,
            1e308,
        ];
        for _ in 0..200_000 {
            let bits = next();
            values.push(f64::from_bits(bits));
            let m = 1.0 + (bits >> 11) as f64 / (1u64 << 53) as f64;
            values.push(m * 2f64.powi((bits % 80) as i32 - 40));
            // Halfway candidates: n digits and a 5.
            let n = 1 + (bits % 9) as i32;
            let digits = (bits >> 8) % 10u64.pow(n as u32);
            values.push((digits as f64 * 10.0 + 5.0) * 10f64.powi((bits % 30) as i32 - 20));
        }
        for v in values {
            for n in [6usize, 9, 1, 3, 17] {
                let by_text: f64 = format!("{v:.prec$e}", prec = n - 1).parse().unwrap();
                assert_eq!(
                    round_significant(v, n).to_bits(),
                    by_text.to_bits(),
                    "{v:e} to {n} digits"
                );
            }
        }
    }

    #[test]
    fn csv_numbers_are_rusts_shortest_text_character_for_character() {
        // Every kind of f64: random bit patterns (all exponents, subnormals), random values
        // of the sizes a run logs, the edges of the positional range, integers, and the
        // extremes. The laid-out digits must equal Rust's `{}` / `{:e}` text exactly.
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut values = vec![
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            f64::EPSILON,
            5e-324,
            -5e-324,
            1e-5,
            9.999999999999999e-6,
            1e16,
            9999999999999998.0,
            0.1 + 0.2,
            9007199254740993.0,
            123456789.0,
            1e-300,
            1.2345678901234567e20,
        ];
        for e in -320..=308 {
            let p = 10f64.powi(e);
            if p == 0.0 {
                continue;
            }
            values.extend([
                p,
                -p,
                p * 1.5,
                f64::from_bits(p.to_bits() + 1),
                f64::from_bits(p.to_bits() - 1),
            ]);
        }
        // Values whose exact decimal expansion is short enough to fall halfway between
        // two shortest texts: powers of two and their small multiples, quarters at 1e15.
        for i in -2000i64..2000 {
            values.push(i as f64);
        }
        for i in [
            (1i64 << 53) - 1,
            1 << 53,
            (1 << 53) + 2,
            1 << 52,
            999_999_999_999_999,
        ] {
            values.extend([i as f64, -(i as f64), i as f64 + 0.5, i as f64 - 0.5]);
        }
        for k in 0..1075 {
            let p = 2f64.powi(-k);
            values.extend([p, 3.0 * p, 5.0 * p, 7.0 * p, 2f64.powi(k.min(1023))]);
        }
        for _ in 0..20_000 {
            let a = ((1u64 << 50) + next() % (7u64 << 50)) as f64;
            values.extend([a + 0.25, a + 0.75, a + 0.5, -(a + 0.25)]);
        }
        for _ in 0..200_000 {
            let bits = next();
            values.push(f64::from_bits(bits));
            // Run-sized values: a mantissa in [1, 2) times 2^(-30..40).
            let m = 1.0 + (bits >> 11) as f64 / (1u64 << 53) as f64;
            let e = (bits % 70) as i32 - 30;
            values.push(m * 2f64.powi(e) * if bits & 1 == 1 { -1.0 } else { 1.0 });
            values.push(((bits % 2_000_001) as f64 - 1_000_000.0) / 1000.0);
        }
        let mut out = Vec::new();
        let mut digits = zmij::Buffer::new();
        for v in values {
            out.clear();
            Num(v).push_to(&mut out, &mut digits);
            let text = std::str::from_utf8(&out).unwrap();
            assert_eq!(text, formatted(v), "bits {:#018x}", v.to_bits());
            assert_eq!(Num(v).to_string(), text);
        }
    }
}

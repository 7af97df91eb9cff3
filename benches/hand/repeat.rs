//! What the hand-written benchmarks share: the `--runs N` count and N runs timed in
//! process (fastest and median, as `examples/time_runs` reports a netlist's).

/// `N` of `--runs N`: a positive count, or the message `program` prints.
pub fn count(program: &str, n: &str) -> Result<usize, String> {
    match n.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "{program}: --runs needs a positive count, got {n:?}"
        )),
    }
}

/// `run` made `runs` times (at least once); `run` gives its result and its own wall time
/// in seconds. Returns the last run's result and wall time, and every wall time ascending.
pub fn repeat<T>(
    runs: usize,
    mut run: impl FnMut() -> Result<(T, f64), String>,
) -> Result<(T, f64, Vec<f64>), String> {
    let (mut last, mut wall) = run()?;
    let mut times = vec![wall];
    for _ in 1..runs {
        (last, wall) = run()?;
        times.push(wall);
    }
    times.sort_by(f64::total_cmp);
    Ok((last, wall, times))
}

/// `min X ms, median Y ms over N runs` of the ascending wall times `times` (seconds).
pub fn summary(times: &[f64]) -> String {
    format!(
        "min {:.3} ms, median {:.3} ms over {} runs",
        times[0] * 1e3,
        times[times.len() / 2] * 1e3,
        times.len()
    )
}

//! The kernel tiers (baseline, AVX, AVX-512: `drivelink_solver::simd`) give the same bits.
//! Each tier compiles the same loops (multiplies and adds, no fused multiply-add, fixed
//! partial sums), so a run must not depend on the processor it runs on. This file is its
//! own test process: switching the tier here touches no other test.

use drivelink_solver::simd::{self, Level};

fn run_at(level: Level, path: &std::path::Path) -> drivelink_core::SimResult {
    simd::set_level(level);
    let reg = drivelink_blocks::registry();
    drivelink_netlist::compile_file(path, &reg)
        .expect("compiles")
        .run()
}

#[test]
fn every_kernel_tier_gives_bit_identical_runs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // A linear-kernel model (1,000 lags: the wide stage, error and dense kernels), the
    // full car (network columns, guards) and the vehicle (Radau5's column sums).
    let netlists = [
        root.join("benches/netlists/tf_chain_1000.json"),
        root.join("models/netlists/full_car.json"),
        root.join("models/netlists/vd_full_car.json"),
    ];
    let best = simd::best();
    for path in &netlists {
        let reference = run_at(Level::Scalar, path);
        assert!(reference.time.len() > 100, "{}: a real run", path.display());
        for level in [Level::Avx, Level::Avx512] {
            if level > best {
                continue; // this processor lacks the tier
            }
            let r = run_at(level, path);
            assert_eq!(reference.status, r.status);
            assert_eq!(reference.end_time.to_bits(), r.end_time.to_bits());
            assert_eq!(reference.time.len(), r.time.len());
            for (k, (ca, cb)) in reference.columns.iter().zip(&r.columns).enumerate() {
                for (i, (x, y)) in ca.iter().zip(cb).enumerate() {
                    assert!(
                        x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
                        "{}: {} row {i} differs between {} and {}: {x} vs {y}",
                        path.display(),
                        reference.names[k],
                        Level::Scalar.name(),
                        level.name()
                    );
                }
            }
            assert_eq!(
                reference.stats,
                r.stats,
                "{}: same solver work",
                path.display()
            );
        }
    }
    simd::set_level(best);
}

//! A friction joint whose engagement is declared to be one of its block's signal inputs
//! (`FrictionDecl::engagement_input`) is guarded by reading that signal in place: the declaration
//! must give exactly what `engagement` and the whole friction law give, for every block
//! type that makes it.

use drivelink_blocks::registry;
use drivelink_core::compile::{resolve_params, Scope};
use drivelink_core::probe::Probe;
use drivelink_core::{Block, BlockBuild, PortKind};

/// Every primitive block type built from its example values (the `Fmu` block needs a file).
fn every_block() -> Vec<(&'static str, Box<dyn Block>)> {
    let reg = registry();
    let mut blocks = Vec::new();
    for t in reg.types() {
        let BlockBuild::Primitive(f) = &t.build else {
            continue;
        };
        if t.name == "Fmu" {
            continue;
        }
        let built = [1.0, 2.0, 0.5].into_iter().find_map(|x| {
            let p = resolve_params("b", t.name, &t.params, &t.example_params(x), &Scope::new());
            p.ok().and_then(|p| f(&p).ok())
        });
        blocks.push((
            t.name,
            built.unwrap_or_else(|| panic!("{} does not build", t.name)),
        ));
    }
    blocks
}

#[test]
fn an_engagement_read_in_place_is_the_blocks_own_engagement() {
    let mut declared = Vec::new();
    for (name, mut b) in every_block() {
        let n_in = b
            .declare()
            .ports
            .iter()
            .filter(|p| p.kind == PortKind::In)
            .count();
        for k in 0..b.declare().mech.frictions.len() {
            let Some(i) = b.declare().mech.frictions[k].engagement_input else {
                continue;
            };
            assert!(i < n_in, "{name}: engagement input {i} of {n_in}");
            declared.push(name);
            let mut probe = Probe::new(b.as_mut());
            for (u, w) in [(0.0, 0.0), (0.37, -2.5), (1.0, 3.0), (0.999_999_7, 1e-9)] {
                let mut inputs = vec![0.25; n_in];
                inputs[i] = u;
                probe.inputs(&inputs);
                let blk = probe.block();
                let e = probe.with_cx(|cx| blk.engagement(k, cx, w));
                let law = probe.friction(k, w);
                assert_eq!(e.to_bits(), u.to_bits(), "{name} joint {k} at u = {u}");
                assert_eq!(
                    law.engagement.to_bits(),
                    u.to_bits(),
                    "{name} law at u = {u}"
                );
            }
        }
    }
    // The clutch and the brake (the full car's five shift elements and wheel brake).
    assert!(
        declared.contains(&"Clutch") && declared.contains(&"Brake"),
        "{declared:?}"
    );
}

use drivelink_models::{full_car, FullCarParams};
fn main() {
    let d = full_car(&FullCarParams::default());
    let mut m = drivelink_core::compile(&d, &drivelink_blocks::registry())
        .unwrap_or_else(|e| panic!("{e}"));
    let r = m.run();
    println!(
        "{} {} {} {:?} wall {:.4}",
        r.status.as_str(),
        r.end_time,
        r.message,
        r.stats,
        r.wall_time_s
    );
    for e in &r.events {
        if e.kind != drivelink_core::EventTag::TimeEvent || e.time > 0.0 {
            println!(
                "{:10.5} {:24} {:10} {}",
                e.time,
                e.block,
                e.kind.as_str(),
                e.detail
            );
        }
    }
    for t in [
        2.0, 9.5, 10.5, 19.5, 20.5, 29.5, 30.5, 39.5, 41.0, 43.9, 46.0, 47.0,
    ] {
        println!(
            "t={t:5.1} engine {:7.1} rpm tau {:7.2} v {:6.2} km/h ratio {:6.3}",
            r.value_at("engine.w", t).unwrap() * 30.0 / std::f64::consts::PI,
            r.value_at("engine.tau", t).unwrap(),
            r.value_at("vehicle.v", t).unwrap() * 3.6,
            r.value_at("gearbox.ratio", t).unwrap()
        );
    }
    let a = m.energy_audit();
    println!("{a:#?}");
}

fn main() {
    let d = drivelink_models::full_car(&drivelink_models::FullCarParams::default());
    let mut m = drivelink_core::compile(&d, &drivelink_blocks::registry()).unwrap();
    let mut w = 0.0;
    for _ in 0..50 {
        w += m.run().wall_time_s;
    }
    println!("mean {:.3} ms", w / 50.0 * 1e3);
}

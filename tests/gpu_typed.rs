//! Typed reductions on the GPU: every op × type × length × byte offset, value calls and `_into`
//! forms, with extreme values and (for floats) NaN, ±inf and -0.0, compared exactly with a CPU
//! reference (`common::typed`).
mod common;
use common::typed::all_cases;
use common::{gpu, upload, Rng, U64};

const LENGTHS: [usize; 9] = [0, 1, 15, 16, 17, 4095, 4096, 4097, (1 << 20) + 5];

#[test]
fn typed_u8() {
    all_cases::<u8>("typed_u8", &LENGTHS, &[vec![]]);
}
#[test]
fn typed_i8() {
    all_cases::<i8>("typed_i8", &LENGTHS, &[vec![]]);
}
#[test]
fn typed_u16() {
    all_cases::<u16>("typed_u16", &LENGTHS, &[vec![]]);
}
#[test]
fn typed_i16() {
    all_cases::<i16>("typed_i16", &LENGTHS, &[vec![]]);
}
#[test]
fn typed_i32() {
    all_cases::<i32>("typed_i32", &LENGTHS, &[vec![]]);
}
#[test]
fn typed_u32() {
    all_cases::<u32>("typed_u32", &LENGTHS, &[vec![]]);
}
#[test]
fn typed_f32() {
    all_cases::<f32>(
        "typed_f32",
        &LENGTHS,
        &[vec![], vec![f32::INFINITY, f32::NEG_INFINITY], vec![f32::NAN], vec![-0.0, -0.0, 0.0]],
    );
}
#[test]
fn typed_f64() {
    all_cases::<f64>(
        "typed_f64",
        &LENGTHS,
        &[vec![], vec![f64::INFINITY, f64::NEG_INFINITY], vec![f64::NAN], vec![-0.0, -0.0, 0.0]],
    );
}

#[test]
fn signed_zeros_order_and_all_nan() {
    let handle = match gpu("signed_zeros_order_and_all_nan") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let zeros = upload(&[0.0f32, -0.0, 0.0, -0.0]);
    assert_eq!(gpu.min(&zeros).unwrap().to_bits(), (-0.0f32).to_bits());
    assert_eq!(gpu.max(&zeros).unwrap().to_bits(), 0.0f32.to_bits());
    let only_neg = upload(&[-0.0f64; 33]);
    assert_eq!(gpu.max(&only_neg).unwrap().to_bits(), (-0.0f64).to_bits());
    let nans = upload(&[f32::NAN; 100]);
    assert!(gpu.min(&nans).unwrap().is_nan() && gpu.minmax(&nans).unwrap().1.is_nan());
}

#[test]
fn f32_sum_with_f64_accumulator() {
    let handle = match gpu("f32_sum_with_f64_accumulator") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh("f64acc");
    for &n in [0usize, 1, 17, 4097, (1 << 24) + 7].iter() {
        let host: Vec<f32> = (0..n).map(|_| rng.range(-1.0, 1.0) as f32 * 1e4).collect();
        let dev = upload(&host);
        let want: f64 = host.iter().map(|&v| v as f64).sum();
        let abs: f64 = host.iter().map(|&v| (v as f64).abs()).sum();
        let got = gpu.sum_f32_f64acc(&dev).unwrap();
        assert!((got - want).abs() <= 512.0 * U64 * abs, "seed {} n {}: {} vs {}", rng.seed, n, got, want);
        // The f64 accumulator is far more accurate than the f32 one on the same data.
        let f32_sum = gpu.sum(&dev).unwrap() as f64;
        assert!((got - want).abs() <= (f32_sum - want).abs() + 1e-9 * abs.max(1.0), "seed {} n {}", rng.seed, n);
    }
}

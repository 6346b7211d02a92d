//! Typed reductions on the GPU: every op × type × length × byte offset, with extreme values
//! and (for floats) NaN, ±inf and -0.0, compared exactly with a CPU reference.
mod common;
use common::reference::Reference;
use common::{gpu, upload, Rng, U64};
use cudakernels::{Error, GpuStream};

const LENGTHS: [usize; 9] = [0, 1, 15, 16, 17, 4095, 4096, 4097, (1 << 20) + 5];

/// Inputs of a case: random values, MIN/MAX at random places and at both ends.
fn make_input<T: Reference>(rng: &mut Rng, n: usize, special: &[T]) -> Vec<T> {
    let mut v: Vec<T> = (0..n).map(|_| T::random(rng)).collect();
    if n == 0 {
        return v;
    }
    for (k, &x) in T::extremes().iter().chain(special.iter()).enumerate() {
        let at = match k % 3 {
            0 => 0,
            1 => n - 1,
            _ => rng.below(n),
        };
        if rng.below(2) == 0 || n < 4 {
            v[at] = x;
        }
    }
    v
}

fn check_case<T: Reference>(gpu: &GpuStream, rng: &mut Rng, host: &[T], what: &str) {
    let elem = std::mem::size_of::<T>();
    let len = host.len();
    // A buffer with 16 bytes of slack so the view can start at every byte offset 0..15
    // that the element size allows.
    let mut padded: Vec<T> = (0..len + 16 / elem).map(|_| T::random(rng)).collect();
    for offset in 0..16 / elem {
        padded[offset..offset + len].copy_from_slice(host);
        let dev = upload(&padded);
        let view = dev.index(offset..offset + len);
        let ctx = format!("seed {} {} {} len {} byte offset {}", rng.seed, T::NAME, what, len, offset * elem);
        let sum = gpu.sum(&view).unwrap();
        assert!(T::sum_ok(sum, host), "{}: sum {:?}, want {:?}", ctx, sum, T::ref_sum(host));
        if len == 0 {
            assert_eq!(gpu.min(&view).unwrap_err(), Error::Empty { op: "min" });
            assert_eq!(gpu.max(&view).unwrap_err(), Error::Empty { op: "max" });
            assert_eq!(gpu.minmax(&view).unwrap_err(), Error::Empty { op: "minmax" });
            continue;
        }
        let want_min = host.iter().copied().fold(host[0], T::ref_min);
        let want_max = host.iter().copied().fold(host[0], T::ref_max);
        let got_min = gpu.min(&view).unwrap();
        let got_max = gpu.max(&view).unwrap();
        let (mm_min, mm_max) = gpu.minmax(&view).unwrap();
        assert!(got_min.same(want_min), "{}: min {:?}, want {:?}", ctx, got_min, want_min);
        assert!(got_max.same(want_max), "{}: max {:?}, want {:?}", ctx, got_max, want_max);
        assert!(
            mm_min.same(want_min) && mm_max.same(want_max),
            "{}: minmax ({:?}, {:?}), want ({:?}, {:?})",
            ctx,
            mm_min,
            mm_max,
            want_min,
            want_max
        );
    }
}

fn all_cases<T: Reference>(test: &str, specials: &[Vec<T>]) {
    let handle = match gpu(test) {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh(test);
    for &n in LENGTHS.iter() {
        for (i, special) in specials.iter().enumerate() {
            let host = make_input(&mut rng, n, special);
            check_case(gpu, &mut rng, &host, &format!("case {}", i));
        }
    }
}

#[test]
fn typed_u8() {
    all_cases::<u8>("typed_u8", &[vec![]]);
}
#[test]
fn typed_i8() {
    all_cases::<i8>("typed_i8", &[vec![]]);
}
#[test]
fn typed_u16() {
    all_cases::<u16>("typed_u16", &[vec![]]);
}
#[test]
fn typed_i16() {
    all_cases::<i16>("typed_i16", &[vec![]]);
}
#[test]
fn typed_i32() {
    all_cases::<i32>("typed_i32", &[vec![]]);
}
#[test]
fn typed_u32() {
    all_cases::<u32>("typed_u32", &[vec![]]);
}
#[test]
fn typed_f32() {
    all_cases::<f32>(
        "typed_f32",
        &[vec![], vec![f32::INFINITY, f32::NEG_INFINITY], vec![f32::NAN], vec![-0.0, -0.0, 0.0]],
    );
}
#[test]
fn typed_f64() {
    all_cases::<f64>(
        "typed_f64",
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

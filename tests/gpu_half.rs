//! f16 and bf16 reductions on the GPU: sum (in f32), min, max and minmax, value calls and `_into`
//! forms, against the CPU reference of `common::typed`: edge lengths × every start 0..15
//! elements into a buffer, ±inf, NaN at the ends and in the middle, -0/+0, subnormals (no
//! flush to zero), all-equal inputs; sums the same bits on every call, stream and handle.
mod common;
use common::typed::{all_cases, check_case, Reference};
use common::{download, gpu, upload, Rng};
use cudakernels::{bf16, f16, Error, TypedOp};

/// Edge lengths: around a vector (8 halves), a warp, blocks of 256 and 1024, and a long one.
const LENGTHS: [usize; 16] = [0, 1, 7, 8, 9, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4097, (1 << 20) + 5];

/// A 16-bit float with its bit patterns at hand.
trait Half: Reference<Sum = f32> {
    fn from_bits(b: u16) -> Self;
    fn to_bits(self) -> u16;
    /// Largest subnormal's bits (the mantissa mask).
    const SUBNORMAL_MAX: u16;
}
macro_rules! half {
    ($($t:ident: $sub:expr),*) => {$(
        impl Half for $t {
            fn from_bits(b: u16) -> Self { $t::from_bits(b) }
            fn to_bits(self) -> u16 { $t::to_bits(self) }
            const SUBNORMAL_MAX: u16 = $sub;
        }
    )*};
}
half!(f16: 0x03ff, bf16: 0x007f);

/// The specials `make_input` places at the ends and in the middle of random inputs.
fn specials<T: Half>() -> Vec<Vec<T>> {
    let sub = T::from_bits(1);
    let neg = |v: T| T::from_bits(v.to_bits() ^ 0x8000);
    vec![
        vec![],
        vec![T::HIGHEST, T::LOWEST],
        vec![T::from_bits(0x7fff)],
        vec![T::from_bits(0x8000), T::from_bits(0x8000), T::from_bits(0)],
        vec![sub, neg(sub), T::from_bits(T::SUBNORMAL_MAX), neg(T::from_bits(T::SUBNORMAL_MAX))],
    ]
}

/// Inputs that `make_input` does not make: subnormals and zeros only (any flush to zero changes
/// min, max and the sum), one NaN at the start, middle or end, and all-equal values.
fn edge_inputs<T: Half>(rng: &mut Rng, n: usize) -> Vec<(String, Vec<T>)> {
    let tiny = (0..n)
        .map(|_| T::from_bits(rng.below(T::SUBNORMAL_MAX as usize + 1) as u16 | (rng.below(2) as u16) << 15))
        .collect();
    let mut cases = vec![("subnormals".to_string(), tiny)];
    let random: Vec<T> = (0..n).map(|_| T::random(rng)).collect();
    for &at in [0, n / 2, n.saturating_sub(1)].iter().filter(|_| n > 0) {
        let mut v = random.clone();
        v[at] = T::from_bits(0x7fff);
        cases.push((format!("NaN at {}", at), v));
    }
    for &bits in [T::random(rng).to_bits(), 0x8000, 0, T::HIGHEST.to_bits(), T::LOWEST.to_bits()].iter() {
        cases.push((format!("all {:#06x}", bits), vec![T::from_bits(bits); n]));
    }
    cases
}

fn half_cases<T: Half>(test: &str) {
    all_cases::<T>(test, &LENGTHS, &specials::<T>());
    let handle = match gpu(test) {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh(test);
    for &n in LENGTHS.iter() {
        for (what, host) in edge_inputs::<T>(&mut rng, n) {
            check_case(gpu, &mut rng, &host, &what);
        }
    }
}

#[test]
fn typed_f16() {
    half_cases::<f16>("typed_f16");
}
#[test]
fn typed_bf16() {
    half_cases::<bf16>("typed_bf16");
}

#[test]
fn half_signed_zeros_and_outputs() {
    let handle = match gpu("half_signed_zeros_and_outputs") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let zeros = upload(&[f16::from_bits(0), f16::from_bits(0x8000), f16::from_bits(0)]);
    assert_eq!(gpu.min(&zeros).unwrap().to_bits(), 0x8000, "min of {{+0, -0}} is -0");
    assert_eq!(gpu.max(&zeros).unwrap().to_bits(), 0, "max of {{+0, -0}} is +0");
    let zeros = upload(&[bf16::from_bits(0x8000), bf16::from_bits(0)]);
    assert_eq!(gpu.minmax(&zeros).unwrap().0.to_bits(), 0x8000);
    assert_eq!(gpu.minmax(&zeros).unwrap().1.to_bits(), 0);
    assert_eq!(gpu.sum(&upload::<f16>(&[])).unwrap().to_bits(), 0, "an empty sum is +0");
    // Outputs too short: a typed error and nothing launched.
    let x = upload(&[f16::from_f32(1.5); 40]);
    let mut one = upload(&[f16::from_f32(7.0)]);
    let err = gpu.reduce_into(TypedOp::MinMax, &x, &mut one).unwrap_err();
    assert_eq!(err, Error::LengthMismatch { what: "out", expected: 2, actual: 1 });
    assert_eq!(download(gpu, &one)[0].to_bits(), f16::from_f32(7.0).to_bits(), "a refused call wrote its output");
    let mut none = upload::<f32>(&[]);
    assert_eq!(gpu.sum_into(&x, &mut none).unwrap_err(), Error::LengthMismatch { what: "out", expected: 1, actual: 0 });
    let err = gpu.reduce_into(TypedOp::Sum, &x, &mut one).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{:?}", err);
}

/// One sum's bits: on repeated value calls, `sum_into`, a second stream and a second handle.
fn deterministic<T: Half>(test: &str) {
    let handle = match gpu(test) {
        Some(g) => g,
        None => return,
    };
    let mut rng = Rng::fresh(test);
    let host: Vec<T> = (0..(1 << 24) + 3).map(|_| T::random(&mut rng)).collect();
    let dev = upload(&host);
    let gpu = handle.default_stream();
    let first = gpu.sum(&dev).unwrap();
    assert!(T::sum_ok(first, &host), "seed {}: sum {} against the f64 reference", rng.seed, first);
    for _ in 0..3 {
        assert_eq!(gpu.sum(&dev).unwrap().to_bits(), first.to_bits(), "seed {}: a repeated call", rng.seed);
    }
    let other = handle.new_stream().unwrap();
    assert_eq!(other.sum(&dev).unwrap().to_bits(), first.to_bits(), "seed {}: a second stream", rng.seed);
    let mut out = other.upload(&[f32::from_bits(!first.to_bits())]).unwrap();
    other.sum_into(&dev, &mut out).unwrap();
    assert_eq!(download(&other, &out)[0].to_bits(), first.to_bits(), "seed {}: sum_into", rng.seed);
    let second = cudakernels::open().unwrap();
    assert_eq!(
        second.default_stream().sum(&dev).unwrap().to_bits(),
        first.to_bits(),
        "seed {}: a second handle",
        rng.seed
    );
}

#[test]
fn f16_sums_are_deterministic() {
    deterministic::<f16>("f16_sums_are_deterministic");
}
#[test]
fn bf16_sums_are_deterministic() {
    deterministic::<bf16>("bf16_sums_are_deterministic");
}

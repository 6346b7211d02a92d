//! Arg reductions on the GPU: argmin, argmax and argminmax, every type × length × element
//! offset 0..15, with ties at both ends, all-equal inputs, integer MIN/MAX and (floats) NaN
//! first/last/middle/several, ±inf and ±0, compared exactly (value bits and index) with a CPU
//! reference; value calls and `_into` with poisoned outputs; the typed errors. Types: u8, i8,
//! u16, i16, i32, u32, f32, f64, f16, bf16.
mod common;
use common::arg::{cases, reference, same, same_value, ArgRef};
use common::{download, gpu, upload, Rng};
use cudakernels::cust::memory::{DeviceBuffer, DevicePointer, DeviceSlice};
use cudakernels::{bf16, f16, ArgOp, Error, GpuStream, ValueIndex, TYPED_TYPES};

/// 128,259: an LLM's logits and 3, a value call of 2 to 64 blocks for every type (each block
/// publishes and the host folds; `ARG_HOST_FOLD_BLOCKS`); 2^20 + 5: more blocks (the last
/// block folds). The host's unit tests check both grids.
const LENGTHS: [usize; 16] = [0, 1, 15, 16, 17, 31, 32, 33, 255, 256, 257, 4095, 4096, 4097, 128_259, (1 << 20) + 5];
const OFFSETS: usize = 16;

/// Value calls and (at a few offsets) `_into` forms of the three ops over `view`, against `host`.
fn check_view<T: ArgRef>(gpu: &GpuStream, view: &DeviceSlice<T>, host: &[T], into: bool, ctx: &str) {
    let (want_min, want_max) = (reference(host, false), reference(host, true));
    let got_min = gpu.argmin(view).unwrap();
    let got_max = gpu.argmax(view).unwrap();
    let (mm_min, mm_max) = gpu.argminmax(view).unwrap();
    assert!(same(got_min, want_min), "{}: argmin {:?}, want {:?}", ctx, got_min, want_min);
    assert!(same(got_max, want_max), "{}: argmax {:?}, want {:?}", ctx, got_max, want_max);
    assert!(same(mm_min, want_min) && same(mm_max, want_max), "{}: argminmax ({:?}, {:?})", ctx, mm_min, mm_max);
    // (The typed max of a type, where this build has it.)
    if !want_max.value.is_nan() && TYPED_TYPES.contains(&T::NAME) {
        let max = gpu.max(view).unwrap();
        assert!(same_value(max, got_max.value), "{}: argmax's value {:?} is not max's {:?}", ctx, got_max.value, max);
    }
    if !into {
        return;
    }
    for op in ArgOp::ALL.iter().copied() {
        let k = op.results();
        let poison = [T::random(&mut Rng::with_seed(7)); 3];
        let mut values = DeviceBuffer::from_slice(&poison).unwrap();
        let mut indices = DeviceBuffer::from_slice(&[0xa5a5_a5a5_a5a5_a5a5u64; 3]).unwrap();
        gpu.arg_into(op, view, &mut values, &mut indices).unwrap();
        let (vals, idx) = (download(gpu, &values), download(gpu, &indices));
        let wants = match op {
            ArgOp::ArgMin => vec![want_min],
            ArgOp::ArgMax => vec![want_max],
            ArgOp::ArgMinMax => vec![want_min, want_max],
        };
        for (j, w) in wants.iter().enumerate() {
            let got = ValueIndex { value: vals[j], index: idx[j] };
            assert!(same(got, *w), "{}: {:?}_into [{}] {:?}, want {:?}", ctx, op, j, got, w);
        }
        assert!(
            same_value(vals[k], poison[k]) && idx[k] == 0xa5a5_a5a5_a5a5_a5a5,
            "{}: {:?}_into wrote past its results",
            ctx,
            op
        );
    }
}

fn all_cases<T: ArgRef>(test: &str) {
    let handle = match gpu(test) {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let mut rng = Rng::fresh(test);
    let mut checked = 0;
    for &n in LENGTHS.iter() {
        for (what, host) in cases::<T>(&mut rng, n) {
            let mut padded: Vec<T> = (0..n + OFFSETS).map(|_| T::random(&mut rng)).collect();
            for offset in 0..OFFSETS {
                padded[offset..offset + n].copy_from_slice(&host);
                let dev = upload(&padded);
                let view = dev.index(offset..offset + n);
                let ctx = format!("seed {} {} {} len {} offset {}", rng.seed, T::NAME, what, n, offset);
                if n == 0 {
                    for op in ArgOp::ALL.iter() {
                        let want = Error::Empty { op: op.name() };
                        let got = match op {
                            ArgOp::ArgMin => gpu.argmin(&view).map(|_| ()),
                            ArgOp::ArgMax => gpu.argmax(&view).map(|_| ()),
                            ArgOp::ArgMinMax => gpu.argminmax(&view).map(|_| ()),
                        };
                        assert_eq!(got.unwrap_err(), want, "{}", ctx);
                        let (mut v, mut i) = (
                            DeviceBuffer::from_slice(&[T::random(&mut rng); 2]).unwrap(),
                            DeviceBuffer::from_slice(&[0u64; 2]).unwrap(),
                        );
                        assert_eq!(gpu.arg_into(*op, &view, &mut v, &mut i).unwrap_err(), want, "{}", ctx);
                    }
                    continue;
                }
                check_view(gpu, &view, &host, offset % 5 == 0, &ctx);
                checked += 1;
            }
        }
    }
    assert!(checked > LENGTHS.len() * OFFSETS * 3, "{} checked {} views", test, checked);
}

#[test]
fn arg_u8() {
    all_cases::<u8>("arg_u8");
}
#[test]
fn arg_i8() {
    all_cases::<i8>("arg_i8");
}
#[test]
fn arg_u16() {
    all_cases::<u16>("arg_u16");
}
#[test]
fn arg_i16() {
    all_cases::<i16>("arg_i16");
}
#[test]
fn arg_i32() {
    all_cases::<i32>("arg_i32");
}
#[test]
fn arg_u32() {
    all_cases::<u32>("arg_u32");
}
#[test]
fn arg_f32() {
    all_cases::<f32>("arg_f32");
}
#[test]
fn arg_f64() {
    all_cases::<f64>("arg_f64");
}
#[test]
fn arg_f16() {
    all_cases::<f16>("arg_f16");
}
#[test]
fn arg_bf16() {
    all_cases::<bf16>("arg_bf16");
}

#[test]
fn bad_outputs_are_refused_before_any_launch() {
    let handle = match gpu("arg_bad_outputs") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let x = upload(&[3.0f32, 1.0, 2.0]);
    let mut one = DeviceBuffer::from_slice(&[0.0f32]).unwrap();
    let mut idx1 = DeviceBuffer::from_slice(&[0u64]).unwrap();
    let mut two = DeviceBuffer::from_slice(&[0.0f32; 2]).unwrap();
    let mut idx2 = DeviceBuffer::from_slice(&[0u64; 2]).unwrap();
    let short = |what| Error::LengthMismatch { what, expected: 2, actual: 1 };
    assert_eq!(gpu.argminmax_into(&x, &mut one, &mut idx2).unwrap_err(), short("values"));
    assert_eq!(gpu.argminmax_into(&x, &mut two, &mut idx1).unwrap_err(), short("indices"));
    // Values laid over the indices' bytes.
    let mut words = DeviceBuffer::from_slice(&[0u64; 2]).unwrap();
    // SAFETY: a view of the first 8 bytes of `words` as two f32; nothing is launched with it.
    let mut aliased =
        unsafe { DeviceSlice::from_raw_parts_mut(DevicePointer::<f32>::from_raw(words.as_device_ptr().as_raw()), 2) };
    assert_eq!(
        gpu.argminmax_into(&x, &mut aliased, &mut words).unwrap_err(),
        Error::Overlap { what: "indices", with: "values" }
    );
    gpu.synchronize().unwrap();
    assert_eq!(download(gpu, &words), vec![0, 0], "nothing was written");
    gpu.argmin_into(&x, &mut one, &mut idx1).unwrap();
    assert_eq!((download(gpu, &one)[0], download(gpu, &idx1)[0]), (1.0, 1));
    gpu.argmax_into(&x, &mut one, &mut idx1).unwrap();
    assert_eq!((download(gpu, &one)[0], download(gpu, &idx1)[0]), (3.0, 0));
}

/// Same bits on every call and on a second stream.
#[test]
fn results_are_deterministic_across_calls_and_streams() {
    let handle = match gpu("arg_deterministic") {
        Some(g) => g,
        None => return,
    };
    let mut rng = Rng::fresh("arg_deterministic");
    let host: Vec<f32> = (0..(1 << 22) + 7).map(|_| (rng.below(64) as f32) - 32.0).collect();
    let x = upload(&host);
    let (a, b) = (handle.default_stream(), handle.new_stream().unwrap());
    let first = a.argminmax(&x).unwrap();
    for _ in 0..20 {
        assert_eq!(a.argminmax(&x).unwrap(), first);
        assert_eq!(b.argminmax(&x).unwrap(), first);
    }
    assert_eq!(first, (reference(&host, false), reference(&host, true)), "seed {}", rng.seed);
}

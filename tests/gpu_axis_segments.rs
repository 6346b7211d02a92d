//! Segmented reductions on the GPU (offsets on the device, as `cub::DeviceSegmentedReduce`):
//! ragged and empty segments, a view into a buffer, offsets past the input or decreasing, and
//! the checks that refuse bad input before anything runs.
mod common;
use common::axis::{check_results, poisoned};
use common::typed::Reference;
use common::{download, gpu, upload, Rng};
use cudakernels::{Axis, AxisShape, AxisStrategy, Error, GpuStream, TypedOp};

/// Runs every op over the segments `offsets` of `input` (a view at `offset`) and checks them
/// against `lines` (what each segment should hold).
fn run_segments<T: Reference>(s: &GpuStream, input: &[T], offset: usize, offsets: &[u64], lines: &[Vec<T>], ctx: &str) {
    // The view sits `offset` elements into a buffer with one element after it (never empty).
    let mut padded: Vec<T> = vec![T::default(); offset];
    padded.extend_from_slice(input);
    padded.push(T::default());
    let dev = upload(&padded);
    let view = dev.index(offset..offset + input.len());
    let offs = upload(offsets);
    let m = lines.len();
    for &op in TypedOp::ALL.iter() {
        let ctx = format!("{} {:?}", ctx, op);
        let (sums, values) = (poisoned::<T::Sum>(m), poisoned::<T>(2 * m));
        match op {
            TypedOp::Sum => s.segmented_sum(&view, &offs, &mut sums.index(..m)),
            _ => s.segmented_reduce(op, &view, &offs, &mut values.index(..)),
        }
        .unwrap_or_else(|e| panic!("{}: {}", ctx, e));
        check_results(op, lines, &download(s, &sums), &download(s, &values), &ctx);
    }
}

fn ragged<T: Reference>(test: &str, specials: &[T]) {
    let handle = match gpu(test) {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let mut rng = Rng::fresh(test);
    for &(segments, longest) in [(1, 0), (1, 5), (40, 33), (300, 10_000), (2000, 64)].iter() {
        // Lengths drawn from 0..=longest, one in four empty.
        let lens: Vec<usize> =
            (0..segments).map(|_| if rng.below(4) == 0 { 0 } else { rng.below(longest + 1) }).collect();
        let total: usize = lens.iter().sum();
        let mut input: Vec<T> = (0..total).map(|_| T::random(&mut rng)).collect();
        for &x in specials.iter() {
            if total > 0 {
                let at = rng.below(total);
                input[at] = x;
            }
        }
        let mut offsets = vec![0u64];
        for &l in lens.iter() {
            offsets.push(offsets.last().unwrap() + l as u64);
        }
        let lines: Vec<Vec<T>> = offsets.windows(2).map(|w| input[w[0] as usize..w[1] as usize].to_vec()).collect();
        let offset = rng.below(16);
        let ctx = format!("seed {} {} {} segments offset {}", rng.seed, T::NAME, segments, offset);
        run_segments(s, &input, offset, &offsets, &lines, &ctx);
    }
}

#[test]
fn segments_u8() {
    ragged::<u8>("segments_u8", &u8::extremes());
}
#[test]
fn segments_i16() {
    ragged::<i16>("segments_i16", &i16::extremes());
}
#[test]
fn segments_u32() {
    ragged::<u32>("segments_u32", &u32::extremes());
}
#[test]
fn segments_i32() {
    ragged::<i32>("segments_i32", &i32::extremes());
}
#[test]
fn segments_f32() {
    ragged::<f32>("segments_f32", &[]);
    ragged::<f32>("segments_f32_special", &[f32::NAN, f32::INFINITY, -0.0, 0.0]);
}
#[test]
fn segments_f64() {
    ragged::<f64>("segments_f64", &[f64::NEG_INFINITY, -0.0, 0.0]);
}
#[test]
fn segments_bf16() {
    use cudakernels::bf16;
    ragged::<bf16>("segments_bf16", &[bf16::NAN, bf16::NEG_ZERO, bf16::ZERO]);
}

/// Offsets past the input read up to its end; a decreasing pair is an empty segment.
#[test]
fn offsets_are_clamped_to_the_input() {
    let handle = match gpu("segments_clamped") {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let mut rng = Rng::fresh("segments_clamped");
    let input: Vec<i32> = (0..100).map(|_| i32::random(&mut rng)).collect();
    let offsets = [10u64, 50, 20, 1000, u64::MAX];
    let lines = vec![input[10..50].to_vec(), vec![], input[20..].to_vec(), vec![]];
    run_segments(s, &input, 0, &offsets, &lines, &format!("seed {} clamped", rng.seed));
}

/// Bad input is refused with its typed error, and the output is left as it was.
#[test]
fn bad_input_is_refused_before_any_launch() {
    let handle = match gpu("axis_bad_input") {
        Some(g) => g,
        None => return,
    };
    let s = handle.default_stream();
    let a = upload(&[1.0f32; 100]);
    let mut out = poisoned::<f32>(10);
    let auto = AxisStrategy::Auto;
    let lda_err = s.sum_along(Axis::Rows, AxisShape::new(10, 10).with_lda(9), &a, &mut out, auto);
    assert_eq!(lda_err, Err(Error::LeadingDimension { lda: 9, n: 10 }));
    let short = s.sum_along(Axis::Rows, AxisShape::new(10, 10).with_lda(11), &a, &mut out, auto);
    assert_eq!(short, Err(Error::LengthMismatch { what: "input", expected: 109, actual: 100 }));
    let small_out = s.sum_along(Axis::Columns, AxisShape::new(5, 20), &a, &mut out, auto);
    assert_eq!(small_out, Err(Error::LengthMismatch { what: "out", expected: 20, actual: 10 }));
    let pairs = s.reduce_along(TypedOp::MinMax, Axis::Rows, AxisShape::new(10, 10), &a, &mut out, auto);
    assert_eq!(pairs, Err(Error::LengthMismatch { what: "out", expected: 20, actual: 10 }));
    assert!(matches!(
        s.reduce_along(TypedOp::Sum, Axis::Rows, AxisShape::new(10, 10), &a, &mut out, auto),
        Err(Error::Unsupported { .. })
    ));
    let mut inside = a.index(90..);
    let overlap = s.reduce_along(TypedOp::Max, Axis::Rows, AxisShape::new(9, 10), &a, &mut inside, auto);
    assert_eq!(overlap, Err(Error::Overlap { what: "out", with: "input" }));
    let no_offsets = upload(&[0u64; 1]);
    let empty = s.segmented_sum(&a, &no_offsets.index(..0), &mut out);
    assert_eq!(empty, Err(Error::LengthMismatch { what: "offsets", expected: 1, actual: 0 }));
    let offsets = upload(&[0u64; 12]);
    let few = s.segmented_reduce(TypedOp::Min, &a, &offsets, &mut out);
    assert_eq!(few, Err(Error::LengthMismatch { what: "out", expected: 11, actual: 10 }));
    assert!(download(s, &out).iter().all(|v| v.to_bits() == 0xa5a5_a5a5), "nothing was written");
}

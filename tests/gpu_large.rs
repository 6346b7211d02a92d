//! Lengths past 2^32: u8, f16, bf16 and f32 reductions, u8 argmin/argmax/argminmax (whole and
//! along an axis), every ladder
//! step, and sgemv and bf16 gemv (both ops; x f32 on rows of 4100, x bf16 on rows of 64, which
//! take the short-row entries) with A of more than 2^32 elements. Inputs are filled
//! on the device (memset) with distinct values placed
//! past 2^32, where a 32-bit index would wrap onto the start. One test, run case after case,
//! with each case's buffers freed before the next (peak about 18 GB of device memory).
mod common;
use common::{download, gpu, Rng, U32};
use cudakernels::cust::memory::{AsyncCopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
use cudakernels::{
    bf16, f16, half_gemv_entry_point, ArgOp, Axis, AxisShape, AxisStrategy, Finish, GemvVector, GpuStream,
    LadderKernel, Op, ReduceStrategy, SgemvBatch, SgemvKernel, SgemvLayout, SgemvOptions, SgemvShape, ValueIndex,
};

const TWO32: usize = 1 << 32;
/// Device memory the largest case needs, with room for scratch.
const PEAK_BYTES: usize = 20 << 30;

/// `len` elements, all `fill` (a memset of its bits), then `placed` from element `at`.
fn filled<T: DeviceCopy + bytemuck::Pod>(
    gpu: &GpuStream,
    len: usize,
    fill: u32,
    at: usize,
    placed: &[T],
) -> DeviceBuffer<T> {
    // SAFETY: every element is written by the memset below before any read.
    let mut buf = unsafe { DeviceBuffer::<T>::uninitialized(len) }.expect("alloc");
    // SAFETY: the memset and copy run in the stream's order; `placed` outlives the wait below.
    unsafe {
        match std::mem::size_of::<T>() {
            1 => buf.set_8_async(fill as u8, gpu.stream().unwrap()),
            2 => buf.set_16_async(fill as u16, gpu.stream().unwrap()),
            4 => buf.set_32_async(fill, gpu.stream().unwrap()),
            _ => unreachable!("1-, 2- or 4-byte elements"),
        }
        .expect("memset");
        buf.index(at..at + placed.len()).async_copy_from(placed, gpu.stream().unwrap()).expect("place");
    }
    gpu.synchronize().expect("fill");
    buf
}

fn bytes_past_2_pow_32(gpu: &GpuStream) {
    let n = TWO32 + 5;
    let placed = [9u8, 0, 250, 255, 2];
    let buf = filled(gpu, n, 1, TWO32, &placed);
    let want = TWO32 as u64 + placed.iter().map(|&v| v as u64).sum::<u64>();
    assert_eq!(gpu.sum(&buf).unwrap(), want, "u8 sum at 2^32 + 5");
    assert_eq!(gpu.minmax(&buf).unwrap(), (0, 255), "u8 minmax at 2^32 + 5");
    assert_eq!((gpu.min(&buf).unwrap(), gpu.max(&buf).unwrap()), (0, 255));
    // A view starting off the 16-byte grid: scalar head, then vectors past 2^32.
    assert_eq!(gpu.sum(&buf.index(3..)).unwrap(), want - 3, "u8 sum of a view at offset 3");
    let mut out = DeviceBuffer::from_slice(&[0xdead_beefu64]).unwrap();
    gpu.sum_into(&buf, &mut out).unwrap();
    assert_eq!(download(gpu, &out)[0], want, "u8 sum_into");
}

/// u8 arg reductions past 2^32: the unique max and min beyond 2^32, then each tied by an equal
/// element before 2^32 (the earlier index wins), and a view at offset 3.
fn arg_past_2_pow_32(gpu: &GpuStream) {
    let n = TWO32 + 37;
    let pair = |value: u8, index: usize| ValueIndex { value, index: index as u64 };
    // All 1 but 0 at 2^32 + 3 and 200 at 2^32 + 20 (a vector past 2^32, lanes 3 and 4 of it).
    let placed = [0u8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 200];
    let buf = filled(gpu, n, 1, TWO32 + 3, &placed);
    let (lo, hi) = (pair(0, TWO32 + 3), pair(200, TWO32 + 20));
    assert_eq!(gpu.argmax(&buf).unwrap(), hi, "u8 argmax past 2^32");
    assert_eq!(gpu.argmin(&buf).unwrap(), lo, "u8 argmin past 2^32");
    assert_eq!(gpu.argminmax(&buf).unwrap(), (lo, hi), "u8 argminmax past 2^32");
    let at3 = |p: ValueIndex<u8>| ValueIndex { index: p.index - 3, ..p };
    assert_eq!(gpu.argminmax(&buf.index(3..)).unwrap(), (at3(lo), at3(hi)), "u8 argminmax of a view at offset 3");
    let (mut values, mut indices) =
        (DeviceBuffer::from_slice(&[7u8; 2]).unwrap(), DeviceBuffer::from_slice(&[9u64; 2]).unwrap());
    gpu.argminmax_into(&buf, &mut values, &mut indices).unwrap();
    assert_eq!((download(gpu, &values), download(gpu, &indices)), (vec![0, 200], vec![lo.index, hi.index]));
    axis_arg_past_2_pow_32(gpu, &buf, lo, hi);
    // Ties: 200 at 5 and 0 at 2^32 - 1, both before the ones past 2^32.
    // SAFETY: the copies run in the stream's order and are waited for before the next reads.
    unsafe {
        buf.index(5..6).async_copy_from(&[200u8][..], gpu.stream().unwrap()).expect("place");
        buf.index(TWO32 - 1..TWO32).async_copy_from(&[0u8][..], gpu.stream().unwrap()).expect("place");
    }
    gpu.synchronize().unwrap();
    let (lo, hi) = (pair(0, TWO32 - 1), pair(200, 5));
    assert_eq!(gpu.argminmax(&buf).unwrap(), (lo, hi), "u8 argminmax with ties across 2^32");
    assert_eq!((gpu.argmin(&buf).unwrap(), gpu.argmax(&buf).unwrap()), (lo, hi));
    // Past the tie at 5: the max is again the one past 2^32.
    assert_eq!(gpu.argmax(&buf.index(6..)).unwrap(), pair(200, TWO32 + 20 - 6), "u8 argmax of a view at 6");
}

/// argmin/argmax along an axis over `buf` (one row, one contiguous column, two segments),
/// whose extremes `lo` and `hi` lie past 2^32: u64 indices past 2^32, u32 indices refused.
fn axis_arg_past_2_pow_32(gpu: &GpuStream, buf: &DeviceBuffer<u8>, lo: ValueIndex<u8>, hi: ValueIndex<u8>) {
    let n = buf.len();
    let (mut values, mut indices) =
        (DeviceBuffer::from_slice(&[7u8; 2]).unwrap(), DeviceBuffer::from_slice(&[9u64; 2]).unwrap());
    let mut got = |op: ArgOp, axis: Axis, shape: AxisShape| {
        gpu.arg_along(op, axis, shape, buf, &mut values, &mut indices, AxisStrategy::Auto).unwrap();
        ValueIndex { value: download(gpu, &values)[0], index: download(gpu, &indices)[0] }
    };
    let (row, column) = (AxisShape::new(1, n), AxisShape::new(n, 1));
    assert_eq!(got(ArgOp::ArgMax, Axis::Rows, row), hi, "u8 argmax of a row past 2^32");
    assert_eq!(got(ArgOp::ArgMin, Axis::Rows, row), lo, "u8 argmin of a row past 2^32");
    assert_eq!(got(ArgOp::ArgMax, Axis::Columns, column), hi, "u8 argmax of a column past 2^32");
    let mut narrow = DeviceBuffer::from_slice(&[9u32; 2]).unwrap();
    let e = gpu.arg_along(ArgOp::ArgMax, Axis::Rows, row, buf, &mut values, &mut narrow, AxisStrategy::Auto);
    assert!(matches!(e, Err(cudakernels::Error::TooLarge { .. })), "u32 indices for a row past 2^32: {:?}", e);
    let offsets = DeviceBuffer::from_slice(&[0u64, 5, n as u64]).unwrap();
    gpu.segmented_arg(ArgOp::ArgMax, buf, &offsets, &mut values, &mut indices).unwrap();
    let want = (vec![1u8, 200], vec![0u64, hi.index - 5]);
    assert_eq!((download(gpu, &values), download(gpu, &indices)), want, "u8 segmented argmax past 2^32");
}

fn floats_past_2_pow_32(gpu: &GpuStream) {
    let n = TWO32 + 3;
    let placed = [-7.5f32, 0.25, 1.0e6];
    let buf = filled(gpu, n, 1.0f32.to_bits(), TWO32, &placed);
    let want = TWO32 as f64 + placed.iter().map(|&v| v as f64).sum::<f64>();
    let abs = TWO32 as f64 + placed.iter().map(|&v| v.abs() as f64).sum::<f64>();
    assert_eq!(gpu.minmax(&buf).unwrap(), (-7.5, 1.0e6), "f32 minmax at 2^32 + 3");
    // Every partial is a multiple of 1/4 below 2^53: the f64-accumulated sum is exact.
    assert_eq!(gpu.sum_f32_f64acc(&buf).unwrap(), want, "f32 sum (f64 accumulator) at 2^32 + 3");
    // f32 accumulators: each thread's sum is exact (quarter-integers below 2^21); the block
    // trees (depth ≤ 10) and the fold of at most the resident blocks may round once a step.
    let grid = cudakernels::ladder_grid(LadderKernel::Vectorized, n, 1024, 4, gpu.sm_count(), gpu.max_threads_per_sm());
    let tol = (grid + 16) as f64 * U32 * abs;
    for (what, got) in
        [("sum", gpu.sum(&buf).unwrap()), ("reduce_sum Auto", gpu.reduce_sum(&buf, ReduceStrategy::Auto).unwrap())]
    {
        assert!((got as f64 - want).abs() <= tol, "f32 {} at 2^32 + 3: got {} want {} tol {}", what, got, want, tol);
    }
    // Every ladder step on the same bits as i32: wrapping sums are exact.
    // SAFETY: the same allocation viewed as i32 (same size and alignment), read only.
    let ints = unsafe { DeviceSlice::from_raw_parts(buf.as_device_ptr().cast::<i32>(), n) };
    let bits = |v: f32| v.to_bits() as i32;
    let want_i32 = placed.iter().fold((bits(1.0)).wrapping_mul(TWO32 as i32), |s, &v| s.wrapping_add(bits(v)));
    let want_i64 = bits(1.0) as i64 * TWO32 as i64 + placed.iter().map(|&v| bits(v) as i64).sum::<i64>();
    assert_eq!(gpu.sum(&ints).unwrap(), want_i64, "i32 typed sum at 2^32 + 3");
    for &kernel in LadderKernel::ALL.iter() {
        let grain = match kernel {
            LadderKernel::GlobalStride | LadderKernel::LocalStride | LadderKernel::WarpShuffle => 8,
            _ => 1,
        };
        for &finish in [Finish::SecondPass, Finish::Atomic].iter() {
            let s = ReduceStrategy::Ladder { kernel, finish, block: 256, grain };
            assert_eq!(gpu.reduce_sum(&ints, s).unwrap(), want_i32, "{:?} at 2^32 + 3", s);
        }
    }
}

/// f16 and bf16 (8 GiB each): 1.0 everywhere but three values placed past 2^32.
fn halves_past_2_pow_32(gpu: &GpuStream) {
    let n = TWO32 + 3;
    let placed = [-7.5f32, 0.25, 1000.0];
    // Each thread's f32 sum is exact (integers and quarters below 2^24); the block trees (depth
    // ≤ 10) and the fold of at most the resident blocks may round once a step.
    let grid = cudakernels::ladder_grid(LadderKernel::Vectorized, n, 1024, 4, gpu.sm_count(), gpu.max_threads_per_sm());
    let want = TWO32 as f64 + placed.iter().map(|&v| v as f64).sum::<f64>();
    let tol = (grid + 16) as f64 * U32 * (TWO32 as f64 + placed.iter().map(|&v| v.abs() as f64).sum::<f64>());
    macro_rules! case {
        ($t:ident) => {{
            let bits: Vec<u16> = placed.iter().map(|&v| $t::from_f32(v).to_bits()).collect();
            let buf = filled(gpu, n, $t::from_f32(1.0).to_bits() as u32, TWO32, &bits);
            // SAFETY: the same allocation viewed as 16-bit floats (same size and alignment), read only.
            let x = unsafe { DeviceSlice::from_raw_parts(buf.as_device_ptr().cast::<$t>(), n) };
            let (lo, hi) = gpu.minmax(&x).unwrap();
            assert_eq!((lo.to_f32(), hi.to_f32()), (-7.5, 1000.0), "{} minmax at 2^32 + 3", stringify!($t));
            assert_eq!(gpu.max(&x).unwrap().to_f32(), 1000.0, "{} max at 2^32 + 3", stringify!($t));
            let got = gpu.sum(&x).unwrap() as f64;
            assert!(
                (got - want).abs() <= tol,
                "{} sum at 2^32 + 3: got {} want {} tol {}",
                stringify!($t),
                got,
                want,
                tol
            );
        }};
    }
    case!(f16);
    case!(bf16);
}

/// sgemv over an m × n A (lda = n) of more than 2^32 elements: A is 0.5 except random rows
/// `random` (the first rows and the last ones, where a 32-bit row offset would wrap).
fn sgemv_past_2_pow_32(gpu: &GpuStream, m: usize, n: usize, kernels: &[SgemvKernel], rng: &mut Rng) {
    assert!(m * n > TWO32);
    let edge = 8.min(m);
    let head: Vec<f32> = (0..edge * n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
    let tail: Vec<f32> = (0..edge * n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
    let a = filled(gpu, m * n, 0.5f32.to_bits(), (m - edge) * n, &tail);
    // SAFETY: the copy runs on the stream, waited for before `head` drops.
    unsafe { a.index(..edge * n).async_copy_from(&head[..], gpu.stream().unwrap()) }.unwrap();
    let x_host: Vec<f32> = (0..n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
    let x = DeviceBuffer::from_slice(&x_host).unwrap();
    gpu.synchronize().unwrap();
    // The row where row · lda first passes 2^32, and its neighbours.
    let cross = TWO32 / n;
    let checked: Vec<usize> = (0..edge).chain(cross.saturating_sub(2)..(cross + 3).min(m)).chain(m - edge..m).collect();
    let row_of = |r: usize| -> Vec<f32> {
        if r < edge {
            head[r * n..(r + 1) * n].to_vec()
        } else if r >= m - edge {
            tail[(r - (m - edge)) * n..(r - (m - edge) + 1) * n].to_vec()
        } else {
            vec![0.5; n]
        }
    };
    for &kernel in kernels {
        let mut y = filled::<f32>(gpu, m, f32::NAN.to_bits(), 0, &[]);
        gpu.sgemv(m, n, &a, &x, &mut y, SgemvOptions { kernel, ..SgemvOptions::default() }).unwrap();
        gpu.synchronize().unwrap();
        for &r in checked.iter() {
            let got = download(gpu, &y.index(r..r + 1))[0] as f64;
            let row = row_of(r);
            let dot: f64 = row.iter().zip(&x_host).map(|(&a, &x)| a as f64 * x as f64).sum();
            let abs: f64 = row.iter().zip(&x_host).map(|(&a, &x)| (a as f64 * x as f64).abs()).sum();
            let tol = 2.0 * ((n + 31) / 32 + 16) as f64 * U32 * abs + 1e-30;
            assert!(
                (got - dot).abs() <= tol,
                "seed {} sgemv {:?} m {} n {} row {}: got {} want {} tol {}",
                rng.seed,
                kernel,
                m,
                n,
                r,
                got,
                dot,
                tol
            );
        }
    }
}

/// `Op::T` over an m × n A (lda = n) of more than 2^32 elements: A is 0.5 except random rows at
/// both ends, with entries in {-1, -0.5, 0, 0.5, 1}, and x in {-1, 0, 1}. Every partial sum is
/// then a multiple of 0.5, exact in f32 in any order while below 2^23 (a random walk over m ≤
/// 2^29 steps stays far below): y must equal the reference.
fn sgemv_t_past_2_pow_32(gpu: &GpuStream, m: usize, n: usize, kernels: &[SgemvKernel], rng: &mut Rng) {
    assert!(m * n > TWO32);
    let edge = 8.min(m);
    let mut pick = |k: usize, step: f32| (rng.below(k) as f32 - (k / 2) as f32) * step;
    let head: Vec<f32> = (0..edge * n).map(|_| pick(5, 0.5)).collect();
    let tail: Vec<f32> = (0..edge * n).map(|_| pick(5, 0.5)).collect();
    let x_host: Vec<f32> = (0..m).map(|_| pick(3, 1.0)).collect();
    let a = filled(gpu, m * n, 0.5f32.to_bits(), (m - edge) * n, &tail);
    // SAFETY: the copy runs on the stream, waited for before `head` drops.
    unsafe { a.index(..edge * n).async_copy_from(&head[..], gpu.stream().unwrap()) }.unwrap();
    let x = DeviceBuffer::from_slice(&x_host).unwrap();
    gpu.synchronize().unwrap();
    let middle: f64 = x_host[edge..m - edge].iter().map(|&v| 0.5 * v as f64).sum();
    let checked: Vec<usize> = (0..edge).chain(n / 2..n / 2 + 3).chain(n - edge..n).collect();
    for &kernel in kernels {
        let mut y = filled::<f32>(gpu, n, f32::NAN.to_bits(), 0, &[]);
        let opts = SgemvOptions { kernel, op: Op::T, ..SgemvOptions::default() };
        gpu.sgemv(m, n, &a, &x, &mut y, opts).unwrap();
        gpu.synchronize().unwrap();
        let got = download(gpu, &y);
        for &c in checked.iter() {
            let ends: f64 = (0..edge)
                .map(|r| {
                    head[r * n + c] as f64 * x_host[r] as f64 + tail[r * n + c] as f64 * x_host[m - edge + r] as f64
                })
                .sum();
            let want = middle + ends;
            assert_eq!(got[c] as f64, want, "seed {} Op::T {:?} m {} n {} column {}", rng.seed, kernel, m, n, c);
        }
    }
}

/// bf16 A (f32 x and y) of m × n (lda = n) past 2^32 elements, both ops: A is 0.5 except
/// random rows at both ends, entries in {-1, -0.5, 0, 0.5, 1} (exact in bf16), x in {-1, 0, 1}:
/// every partial sum is a multiple of 0.5 far below 2^23, exact in f32 in any order.
fn half_gemv_past_2_pow_32<X: GemvVector<bf16> + Copy>(
    gpu: &GpuStream,
    m: usize,
    n: usize,
    x_of: fn(f32) -> X,
    rng: &mut Rng,
) {
    assert!(m * n > TWO32);
    let edge = 8.min(m);
    let mut pick = |k: usize, step: f32| (rng.below(k) as f32 - (k / 2) as f32) * step;
    let head: Vec<f32> = (0..edge * n).map(|_| pick(5, 0.5)).collect();
    let tail: Vec<f32> = (0..edge * n).map(|_| pick(5, 0.5)).collect();
    let x_n: Vec<f32> = (0..n).map(|_| pick(3, 1.0)).collect();
    let x_t: Vec<f32> = (0..m).map(|_| pick(3, 1.0)).collect();
    // A memset of 0.5's bits (as u16s), then the same memory as bf16s.
    let bits = filled::<u16>(gpu, m * n, bf16::from_f32(0.5).to_bits() as u32, 0, &[]);
    // SAFETY: `bits` holds m·n initialized 16-bit elements and outlives `a`; bf16 is 16 bits.
    let a = unsafe { DeviceSlice::from_raw_parts(bits.as_device_ptr().cast::<bf16>(), m * n) };
    let to_bf16 = |v: &[f32]| v.iter().map(|&f| bf16::from_f32(f)).collect::<Vec<_>>();
    let (head16, tail16) = (to_bf16(&head), to_bf16(&tail));
    // SAFETY: the copies run in the stream's order; the host data outlive the wait.
    unsafe {
        a.index(..edge * n).async_copy_from(&head16[..], gpu.stream().unwrap()).expect("head");
        a.index((m - edge) * n..).async_copy_from(&tail16[..], gpu.stream().unwrap()).expect("tail");
    }
    gpu.synchronize().expect("fill");
    let at = |r: usize, c: usize| -> f64 {
        if r < edge {
            head[r * n + c] as f64
        } else if r >= m - edge {
            tail[(r - (m - edge)) * n + c] as f64
        } else {
            0.5
        }
    };
    for &op in [Op::N, Op::T].iter() {
        let (x_host, y_len) = if op == Op::N { (&x_n, m) } else { (&x_t, n) };
        let x = DeviceBuffer::from_slice(&x_host.iter().map(|&v| x_of(v)).collect::<Vec<X>>()).unwrap();
        let mut y = DeviceBuffer::from_slice(&vec![f32::NAN; y_len]).unwrap();
        let opts = SgemvOptions { op, ..SgemvOptions::default() };
        gpu.gemv(m, n, &a, &x, &mut y, SgemvBatch::ONE, opts).unwrap();
        let got = download(gpu, &y);
        let checked: Vec<usize> = (0..edge).chain(y_len / 2..y_len / 2 + 3).chain(y_len - edge..y_len).collect();
        for &i in checked.iter() {
            let want: f64 = if op == Op::N {
                let middle_row = i >= edge && i < m - edge;
                if middle_row {
                    x_n.iter().map(|&v| 0.5 * v as f64).sum()
                } else {
                    (0..n).map(|c| at(i, c) * x_n[c] as f64).sum()
                }
            } else {
                let middle: f64 = x_t[edge..m - edge].iter().map(|&v| 0.5 * v as f64).sum();
                let ends: f64 = (0..edge).chain(m - edge..m).map(|r| at(r, i) * x_t[r] as f64).sum();
                middle + ends
            };
            assert_eq!(got[i] as f64, want, "seed {} bf16 {:?} m {} n {} output {}", rng.seed, op, m, n, i);
        }
    }
}

#[test]
fn lengths_past_2_pow_32() {
    let handle = match gpu("lengths_past_2_pow_32") {
        Some(g) => g,
        None => return,
    };
    let gpu = handle.default_stream();
    let (free, _) = cudakernels::cust::memory::mem_get_info().unwrap();
    assert!(free >= PEAK_BYTES, "needs {} GiB of free device memory, {} GiB free", PEAK_BYTES >> 30, free >> 30);
    let mut rng = Rng::fresh("large");
    bytes_past_2_pow_32(gpu);
    arg_past_2_pow_32(gpu);
    floats_past_2_pow_32(gpu);
    halves_past_2_pow_32(gpu);
    let wide = [SgemvKernel::Auto, SgemvKernel::WarpScalar, SgemvKernel::BlockPerRow, SgemvKernel::SplitKShifted];
    sgemv_past_2_pow_32(gpu, (1 << 20) + 3, 4100, &wide, &mut rng);
    let transposed = [SgemvKernel::Auto, SgemvKernel::TStripes(8), SgemvKernel::TScalar, SgemvKernel::TVec4];
    sgemv_t_past_2_pow_32(gpu, (1 << 20) + 3, 4100, &transposed, &mut rng);
    let narrow = [SgemvKernel::Auto, SgemvKernel::RowsPerWarp(2), SgemvKernel::N32, SgemvKernel::StagedRows];
    sgemv_past_2_pow_32(gpu, (1 << 28) + 5, 16, &narrow, &mut rng);
    sgemv_t_past_2_pow_32(gpu, (1 << 28) + 5, 16, &[SgemvKernel::Auto, SgemvKernel::TScalar], &mut rng);
    half_gemv_past_2_pow_32(gpu, (1 << 20) + 3, 4100, |v| v, &mut rng);
    // Rows of 64 with a bf16 x: Op::N on the short-row entries (`_ns`), Op::T on the 16-byte
    // column kernel, both past 2^32 elements of A.
    let (m, n) = ((1 << 26) + 5, 64);
    for &(op, entry) in [(Op::N, "gemv_bf16_bf16_f32_ns"), (Op::T, "gemv_bf16_bf16_f32_tv")].iter() {
        let shape = SgemvShape { op, m, n, lda: n, a_addr: 0, x_addr: 0 };
        assert_eq!(half_gemv_entry_point::<bf16, bf16, f32>(gpu, &shape, &SgemvLayout::SINGLE).unwrap(), entry);
    }
    half_gemv_past_2_pow_32(gpu, m, n, bf16::from_f32, &mut rng);
}

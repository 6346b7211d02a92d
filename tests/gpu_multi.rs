//! Several GPUs through NCCL, with however many the machine has (one included: NCCL runs with
//! a single rank). Shards of unequal and zero length; exact integer results; f32 sums against
//! an f64 reference and bit-identical on every rank and every repetition.
mod common;
mod multi_gpu;

use common::{download, Rng, U32};
use cudakernels::cust::memory::DeviceBuffer;
use cudakernels::multi::upload;
use cudakernels::nccl::Nccl;
use cudakernels::{Error, MultiGpu, RowShard, SgemvOptions};
use multi_gpu::multi;

/// Shard lengths for `ranks`: uneven, with an empty one where there are two ranks or more.
fn uneven(total: usize, ranks: usize) -> Vec<usize> {
    if ranks == 1 {
        return vec![total];
    }
    let mut lens: Vec<usize> = (0..ranks).map(|r| total * (r + 1) / (ranks * (ranks + 1) / 2)).collect();
    lens[ranks / 2] = 0;
    let used: usize = lens.iter().sum();
    lens[ranks - 1] += total - used;
    lens
}

fn shards_of<T: cudakernels::cust::memory::DeviceCopy>(
    m: &MultiGpu,
    host: &[T],
    lens: &[usize],
) -> Vec<DeviceBuffer<T>> {
    let mut start = 0;
    m.gpus()
        .iter()
        .zip(lens)
        .map(|(gpu, &len)| {
            let b = upload(gpu, &host[start..start + len]).unwrap();
            start += len;
            b
        })
        .collect()
}

#[test]
fn a_missing_nccl_is_a_typed_error() {
    match Nccl::load_from("libnccl-that-does-not-exist.so.2") {
        Err(Error::NcclUnavailable { library, reason }) => {
            assert_eq!(library, "libnccl-that-does-not-exist.so.2");
            assert!(!reason.is_empty());
            let text = Error::NcclUnavailable { library, reason }.to_string();
            assert!(text.contains("NCCL") && text.contains("install"), "{}", text);
        }
        other => panic!("expected NcclUnavailable, got {:?}", other.map(|n| n.version())),
    }
}

#[test]
fn integer_sums_and_extremes_are_exact_on_every_rank() {
    let m = match multi("integer_sums_and_extremes_are_exact_on_every_rank") {
        Some(m) => m,
        None => return,
    };
    let mut rng = Rng::fresh("multi_integers");
    for &total in [1usize, 33, 4097, (1 << 22) + 5].iter() {
        let lens = uneven(total, m.ranks());
        let bytes: Vec<u8> = (0..total).map(|_| rng.next_u64() as u8).collect();
        let shards = shards_of(&m, &bytes, &lens);
        let views: Vec<_> = shards.iter().map(|b| b.as_slice()).collect();
        let want: u64 = bytes.iter().map(|&b| b as u64).sum();
        assert_eq!(m.sum(&views).unwrap(), vec![want; m.ranks()], "seed {} total {}", rng.seed, total);
        let (lo, hi) = (*bytes.iter().min().unwrap(), *bytes.iter().max().unwrap());
        assert_eq!(m.minmax(&views).unwrap(), vec![(lo, hi); m.ranks()], "seed {}", rng.seed);
        assert_eq!(m.min(&views).unwrap(), vec![lo; m.ranks()]);
        assert_eq!(m.max(&views).unwrap(), vec![hi; m.ranks()]);

        let ints: Vec<i32> = (0..total).map(|_| rng.next_u64() as i32).collect();
        let shards = shards_of(&m, &ints, &lens);
        let views: Vec<_> = shards.iter().map(|b| b.as_slice()).collect();
        let wrapped = ints.iter().fold(0i32, |a, &b| a.wrapping_add(b));
        assert_eq!(m.reduce_sum(&views).unwrap(), vec![wrapped; m.ranks()], "seed {}", rng.seed);
        let wide: i64 = ints.iter().map(|&v| v as i64).sum();
        assert_eq!(m.sum(&views).unwrap(), vec![wide; m.ranks()], "seed {}", rng.seed);
        let i16s: Vec<i16> = ints.iter().map(|&v| v as i16).collect();
        let shards = shards_of(&m, &i16s, &lens);
        let views: Vec<_> = shards.iter().map(|b| b.as_slice()).collect();
        let (lo, hi) = (*i16s.iter().min().unwrap(), *i16s.iter().max().unwrap());
        assert_eq!(m.minmax(&views).unwrap(), vec![(lo, hi); m.ranks()], "seed {}", rng.seed);
    }
}

#[test]
fn float_sums_match_f64_and_repeat_bit_for_bit() {
    let m = match multi("float_sums_match_f64_and_repeat_bit_for_bit") {
        Some(m) => m,
        None => return,
    };
    let mut rng = Rng::fresh("multi_floats");
    for &total in [1usize, 1000, (1 << 24) + 3].iter() {
        let host: Vec<f32> = (0..total).map(|_| rng.range(-1.0, 1.0) as f32).collect();
        let shards = m.scatter(&host).unwrap();
        let views: Vec<_> = shards.iter().map(|b| b.as_slice()).collect();
        let want: f64 = host.iter().map(|&v| v as f64).sum();
        let abs: f64 = host.iter().map(|&v| v.abs() as f64).sum();
        // Each rank's tree (depth ≤ log2 n + the block fold), then one f32 add per rank.
        let depth = common::log2_ceil(total) + 16 + m.ranks();
        let first = m.reduce_sum(&views).unwrap();
        for &got in first.iter() {
            assert!((got as f64 - want).abs() <= 2.0 * depth as f64 * U32 * abs, "seed {} n {}", rng.seed, total);
            assert_eq!(got.to_bits(), first[0].to_bits(), "ranks disagree");
        }
        for _ in 0..5 {
            let again = m.reduce_sum(&views).unwrap();
            assert!(again.iter().all(|v| v.to_bits() == first[0].to_bits()), "not deterministic, seed {}", rng.seed);
        }
        let (lo, hi) = m.minmax(&views).unwrap()[0];
        assert_eq!(lo, host.iter().cloned().fold(f32::INFINITY, f32::min));
        assert_eq!(hi, host.iter().cloned().fold(f32::NEG_INFINITY, f32::max));
    }
    let none: Vec<DeviceBuffer<f32>> = m.scatter(&[]).unwrap();
    let views: Vec<_> = none.iter().map(|b| b.as_slice()).collect();
    assert!(matches!(m.minmax(&views), Err(Error::Empty { .. })));
    assert_eq!(m.reduce_sum(&views).unwrap(), vec![0.0; m.ranks()]);
    assert!(matches!(m.sum(&views[..0]), Err(Error::LengthMismatch { .. })));
}

#[test]
fn row_sharded_sgemv_with_uneven_rows_gathers_y_everywhere() {
    let m = match multi("row_sharded_sgemv_with_uneven_rows_gathers_y_everywhere") {
        Some(m) => m,
        None => return,
    };
    let mut rng = Rng::fresh("multi_sgemv");
    for &(rows_total, n) in [(1usize, 3usize), (1000, 130), (65537, 128)].iter() {
        let lens = uneven(rows_total, m.ranks());
        let a: Vec<f32> = (0..rows_total * n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
        let x: Vec<f32> = (0..n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
        let a_shards = shards_of(&m, &a, &lens.iter().map(|l| l * n).collect::<Vec<_>>());
        let mut xs: Vec<DeviceBuffer<f32>> = m
            .gpus()
            .iter()
            .enumerate()
            .map(|(r, g)| upload(g, &if r == 0 { x.clone() } else { vec![f32::NAN; n] }).unwrap())
            .collect();
        let mut ys: Vec<DeviceBuffer<f32>> =
            m.gpus().iter().zip(&lens).map(|(g, &l)| upload(g, &vec![f32::NAN; l]).unwrap()).collect();
        let mut fulls: Vec<DeviceBuffer<f32>> =
            m.gpus().iter().map(|g| upload(g, &vec![f32::NAN; rows_total]).unwrap()).collect();
        let mut shards: Vec<RowShard> = a_shards
            .iter()
            .zip(xs.iter_mut())
            .zip(ys.iter_mut())
            .zip(&lens)
            .map(|(((a, x), y), &rows)| RowShard { rows, a: a.as_slice(), x, y })
            .collect();
        m.sgemv_rows(n, &mut shards, SgemvOptions::default()).unwrap();
        let mut full_views: Vec<_> = fulls.iter_mut().map(|f| &mut **f).collect();
        m.gather_rows(&shards, &mut full_views).unwrap();
        m.synchronize().unwrap();
        for (r, full) in fulls.iter().enumerate() {
            m.gpus()[r].bind().unwrap();
            let got = download(m.gpus()[r].default_stream(), full);
            for (row, &g) in got.iter().enumerate() {
                let products = a[row * n..(row + 1) * n].iter().zip(&x).map(|(&p, &q)| p as f64 * q as f64);
                let (want, bound) = products.fold((0.0, 0.0), |(s, b), p| (s + p, b + f64::abs(p)));
                let tol = 2.0 * ((n + 31) / 32 + 16) as f64 * U32 * bound + 1e-30;
                assert!(
                    (g as f64 - want).abs() <= tol,
                    "rank {} row {}: {} vs {} (seed {})",
                    r,
                    row,
                    g,
                    want,
                    rng.seed
                );
            }
        }
    }
}

#[test]
fn bad_shards_are_typed_errors_before_anything_runs() {
    let m = match multi("bad_shards_are_typed_errors_before_anything_runs") {
        Some(m) => m,
        None => return,
    };
    let n = 8;
    let rows = vec![4usize; m.ranks()];
    let a: Vec<DeviceBuffer<f32>> = m.gpus().iter().map(|g| upload(g, &vec![1.0f32; 4 * n]).unwrap()).collect();
    let mut xs: Vec<DeviceBuffer<f32>> = m.gpus().iter().map(|g| upload(g, &vec![1.0f32; n]).unwrap()).collect();
    // The last rank's y is one row short.
    let mut ys: Vec<DeviceBuffer<f32>> = m
        .gpus()
        .iter()
        .enumerate()
        .map(|(r, g)| upload(g, &vec![f32::NAN; if r + 1 == m.ranks() { 3 } else { 4 }]).unwrap())
        .collect();
    let mut shards: Vec<RowShard> = a
        .iter()
        .zip(xs.iter_mut())
        .zip(ys.iter_mut())
        .zip(&rows)
        .map(|(((a, x), y), &rows)| RowShard { rows, a: a.as_slice(), x, y })
        .collect();
    let err = m.sgemv_rows(n, &mut shards, SgemvOptions::default()).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { what: "y", expected: 4, actual: 3 }), "{:?}", err);
    let t = SgemvOptions { op: cudakernels::Op::T, ..SgemvOptions::default() };
    assert!(matches!(m.sgemv_rows(n, &mut shards, t), Err(Error::Unsupported { .. })));
    m.synchronize().unwrap();
    drop(shards);
    for (r, y) in ys.iter().enumerate() {
        m.gpus()[r].bind().unwrap();
        assert!(
            download(m.gpus()[r].default_stream(), y).iter().all(|v| v.is_nan()),
            "rank {} ran although a shard was bad",
            r
        );
    }
    // The handle keeps working.
    let ones: Vec<DeviceBuffer<u32>> = m.gpus().iter().map(|g| upload(g, &[1u32, 2, 3]).unwrap()).collect();
    let views: Vec<_> = ones.iter().map(|b| b.as_slice()).collect();
    assert_eq!(m.sum(&views).unwrap(), vec![6 * m.ranks() as u64; m.ranks()]);
    assert!(matches!(m.sum(&views[..0]), Err(Error::LengthMismatch { .. })));
}

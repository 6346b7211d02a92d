//! One process per GPU: the ranks of one communicator run in child processes of this test
//! binary, made from an NCCL id that the parent makes and hands them in the environment, as a
//! multi-node program hands it over its own channel. One rank where the machine has one GPU; two
//! processes, one GPU each, where it has two or more (else a skip line, which REQUIRE_GPU=1 does
//! not fail). Each child checks its results against the CPU exactly: integer sums and extremes,
//! f32 extremes, and a row-sharded sgemv of small integers (every partial sum exact in f32).
mod common;

use common::{download, Rng};
use cudakernels::cust::memory::DeviceBuffer;
use cudakernels::multi::{shard_ranges, upload};
use cudakernels::nccl::Nccl;
use cudakernels::{Error, ImageChoice, MultiGpu, NcclId, RowShard, SgemvOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ID: &str = "CUDAKERNELS_TEST_NCCL_ID";
const RANK: &str = "CUDAKERNELS_TEST_RANK";
const RANKS: &str = "CUDAKERNELS_TEST_RANKS";
const SEED: &str = "CUDAKERNELS_TEST_SEED";
/// How long the children may take, NCCL's setup included, before they are killed.
const CHILD_LIMIT: Duration = Duration::from_secs(300);

#[test]
fn one_rank_in_a_child_process_is_exact() {
    run_ranks("one_rank_in_a_child_process_is_exact", 1);
}

#[test]
fn two_processes_with_one_gpu_each_are_exact() {
    run_ranks("two_processes_with_one_gpu_each_are_exact", 2);
}

#[test]
fn ranks_outside_the_communicator_are_refused_before_nccl() {
    let id = NcclId::from_bytes([7; 128]);
    let gpu = match common::gpu("ranks_outside_the_communicator_are_refused_before_nccl") {
        Some(g) => g,
        None => return,
    };
    // No NCCL call is made: these return at once, NCCL installed or not.
    assert!(matches!(MultiGpu::init_rank(gpu, &id, 2, 2), Err(Error::TooLarge { len: 2, max: 1, .. })));
    let gpu = cudakernels::open().unwrap();
    assert!(matches!(MultiGpu::init_rank(gpu, &id, 0, 0), Err(Error::Unsupported { .. })));
}

/// The child: one rank, as the parent's environment says. Runs only when a parent started it.
#[test]
#[ignore = "a rank of the multi-process tests, which start it"]
fn rank_child() {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{} is unset: run by the parent test", name));
    let id: NcclId = var(ID).parse().expect("the NCCL id");
    let (rank, nranks): (usize, usize) = (var(RANK).parse().unwrap(), var(RANKS).parse().unwrap());
    let seed: u64 = var(SEED).parse().unwrap();
    let gpu = cudakernels::open_with(rank as u32, ImageChoice::Auto).expect("open this rank's GPU");
    let m = MultiGpu::init_rank(gpu, &id, nranks, rank).expect("ncclCommInitRank");
    assert_eq!((m.ranks(), m.total_ranks(), m.first_rank()), (1, nranks, rank));
    let mut rng = Rng::with_seed(seed);
    reductions_are_exact(&m, &mut rng);
    row_sharded_sgemv_is_exact(&m, &mut rng);
    println!("rank {} of {}: ok (seed {})", rank, nranks, seed);
}

/// Every process makes the same whole input from the seed and uploads its own shard.
fn reductions_are_exact(m: &MultiGpu, rng: &mut Rng) {
    for &total in [1usize, 33, 4097, (1 << 20) + 5].iter() {
        let bytes: Vec<u8> = (0..total).map(|_| rng.next_u64() as u8).collect();
        let shards = m.scatter(&bytes).unwrap();
        let views: Vec<_> = shards.iter().map(|b| b.as_slice()).collect();
        let want: u64 = bytes.iter().map(|&b| b as u64).sum();
        assert_eq!(m.sum(&views).unwrap(), vec![want], "total {} seed {}", total, rng.seed);
        let (lo, hi) = (*bytes.iter().min().unwrap(), *bytes.iter().max().unwrap());
        assert_eq!(m.minmax(&views).unwrap(), vec![(lo, hi)], "total {} seed {}", total, rng.seed);
        assert_eq!(m.min(&views).unwrap(), vec![lo]);
        assert_eq!(m.max(&views).unwrap(), vec![hi]);

        let ints: Vec<i32> = (0..total).map(|_| rng.next_u64() as i32).collect();
        let shards = m.scatter(&ints).unwrap();
        let views: Vec<_> = shards.iter().map(|b| b.as_slice()).collect();
        let wrapped = ints.iter().fold(0i32, |a, &b| a.wrapping_add(b));
        assert_eq!(m.reduce_sum(&views).unwrap(), vec![wrapped], "seed {}", rng.seed);
        let wide: i64 = ints.iter().map(|&v| v as i64).sum();
        assert_eq!(m.sum(&views).unwrap(), vec![wide], "seed {}", rng.seed);

        let floats: Vec<f32> = (0..total).map(|_| rng.range(-1e6, 1e6) as f32).collect();
        let shards = m.scatter(&floats).unwrap();
        let views: Vec<_> = shards.iter().map(|b| b.as_slice()).collect();
        let lo = floats.iter().cloned().fold(f32::INFINITY, f32::min);
        let hi = floats.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        assert_eq!(m.minmax(&views).unwrap(), vec![(lo, hi)], "seed {}", rng.seed);
    }
    // Every shard empty, in every process: each rank learns it and fails alike.
    let empty = m.scatter::<u8>(&[]).unwrap();
    let views: Vec<_> = empty.iter().map(|b| b.as_slice()).collect();
    assert!(matches!(m.minmax(&views), Err(Error::Empty { .. })));
    assert_eq!(m.sum(&views).unwrap(), vec![0u64]);
}

/// Rank 0's x is broadcast into the others' (poisoned) x; each rank's rows are gathered into
/// every rank's (poisoned) full y.
fn row_sharded_sgemv_is_exact(m: &MultiGpu, rng: &mut Rng) {
    let (rank, gpu) = (m.first_rank(), &m.gpus()[0]);
    for &(rows_total, n) in [(1usize, 3usize), (1001, 130), (65537, 128)].iter() {
        let small = |rng: &mut Rng| (rng.below(5) as f32) - 2.0;
        let a: Vec<f32> = (0..rows_total * n).map(|_| small(rng)).collect();
        let x: Vec<f32> = (0..n).map(|_| small(rng)).collect();
        let mine = shard_ranges(rows_total, m.total_ranks())[rank].clone();
        let a_dev = upload(gpu, &a[mine.start * n..mine.end * n]).unwrap();
        let mut x_dev = upload(gpu, &if rank == 0 { x.clone() } else { vec![f32::NAN; n] }).unwrap();
        let mut y_dev = upload(gpu, &vec![f32::NAN; mine.len()]).unwrap();
        let mut full: DeviceBuffer<f32> = upload(gpu, &vec![f32::NAN; rows_total]).unwrap();
        let mut shards = [RowShard { rows: mine.len(), a: a_dev.as_slice(), x: &mut x_dev, y: &mut y_dev }];
        m.sgemv_rows(n, &mut shards, SgemvOptions::default()).unwrap();
        m.gather_rows(&shards, &mut [&mut *full]).unwrap();
        m.synchronize().unwrap();
        let got = download(gpu.default_stream(), &full);
        for (row, &g) in got.iter().enumerate() {
            let want: f32 = a[row * n..(row + 1) * n].iter().zip(&x).map(|(&p, &q)| p * q).sum();
            assert_eq!(g, want, "rank {} row {} of {}×{} (seed {})", rank, row, rows_total, n, rng.seed);
        }
    }
}

/// Starts `nranks` children of this binary (rank r on device r) from one fresh id, and waits
/// for them within [`CHILD_LIMIT`]; every one must pass. Their output goes to a file each and is
/// then printed with a prefix, so that a test runner counts no child's libtest summary.
fn run_ranks(test: &str, nranks: usize) {
    let gpu = match common::gpu(test) {
        Some(g) => g,
        None => return,
    };
    let visible = cudakernels::cust::device::Device::num_devices().expect("cuDeviceGetCount") as usize;
    if visible < nranks {
        // A missing second GPU is a skip even with REQUIRE_GPU=1 (as in gpu_multi.rs).
        let _ = writeln!(std::io::stderr(), "SKIPPED {}: needs {} GPUs, {} visible", test, nranks, visible);
        return;
    }
    let nccl = match Nccl::load() {
        Ok(n) => n,
        Err(e) if std::env::var("REQUIRE_GPU").map(|v| v != "1").unwrap_or(true) => {
            let _ = writeln!(std::io::stderr(), "SKIPPED {}: no NCCL ({})", test, e);
            return;
        }
        Err(e) => panic!("REQUIRE_GPU=1 but NCCL could not be loaded: {}", e),
    };
    drop(gpu);
    let id = nccl.unique_id().expect("ncclGetUniqueId");
    let seed = Rng::fresh(test).seed;
    let exe = std::env::current_exe().unwrap();
    let logs: Vec<PathBuf> = (0..nranks)
        .map(|rank| std::env::temp_dir().join(format!("{}.{}.rank{}.log", test, std::process::id(), rank)))
        .collect();
    let mut children: Vec<Child> = (0..nranks)
        .map(|rank| {
            let log = std::fs::File::create(&logs[rank]).expect("a rank's log file");
            Command::new(&exe)
                .args(["rank_child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
                .env(ID, id.to_hex())
                .env(RANK, rank.to_string())
                .env(RANKS, nranks.to_string())
                .env(SEED, seed.to_string())
                .stdout(Stdio::from(log.try_clone().unwrap()))
                .stderr(Stdio::from(log))
                .spawn()
                .expect("start a rank")
        })
        .collect();
    let codes = wait_ranks(&mut children, &logs);
    assert!(codes.iter().all(Option::is_some), "{}: ranks still running after {:?} (seed {})", test, CHILD_LIMIT, seed);
    assert!(codes.iter().all(|c| *c == Some(true)), "{}: ranks' results {:?} (seed {})", test, codes, seed);
}

/// Each rank's success, or `None` for one still running after [`CHILD_LIMIT`] (then killed);
/// prints and removes their logs.
fn wait_ranks(children: &mut [Child], logs: &[PathBuf]) -> Vec<Option<bool>> {
    let start = Instant::now();
    let mut codes = vec![None; children.len()];
    while codes.iter().any(Option::is_none) && start.elapsed() <= CHILD_LIMIT {
        for (child, code) in children.iter_mut().zip(codes.iter_mut()).filter(|(_, c)| c.is_none()) {
            *code = child.try_wait().expect("wait for a rank").map(|s| s.success());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for (child, code) in children.iter_mut().zip(&codes) {
        if code.is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    for (rank, log) in logs.iter().enumerate() {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        text.lines().for_each(|line| println!("rank {} | {}", rank, line));
        let _ = std::fs::remove_file(log);
    }
    codes
}

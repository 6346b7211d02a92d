//! A rank that faults or stalls fails the call within bounded time with `Error::RankFailed`
//! naming it, instead of leaving every rank waiting; the `MultiGpu` then returns that error at
//! once from every collective call and drops without waiting. A CUDA fault is sticky for its
//! context, so the faulting run is a child process: this test binary again, with `SCENARIO`
//! set, running that one test.
mod multi_gpu;

use cudakernels::cust::memory::{DeviceBuffer, DevicePointer, DeviceSlice};
use cudakernels::multi::upload;
use cudakernels::{Error, MultiGpu};
use multi_gpu::multi;
use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Set in the child process, which then runs the faulting scenario.
const SCENARIO: &str = "CUDAKERNELS_FAULT_SCENARIO";
/// How long the child may run before it counts as hung (and is killed).
const CHILD_LIMIT: Duration = Duration::from_secs(30);
/// How long a failing call may take.
const CALL_LIMIT: Duration = Duration::from_secs(10);
/// What the child prints once every check of its scenario has passed.
const PASSED: &str = "fault scenario passed:";

/// One buffer of `n` ones per rank, and the sum every rank should return for them.
fn ones(m: &MultiGpu, n: usize) -> (Vec<DeviceBuffer<u32>>, Vec<u64>) {
    let bufs = m.gpus().iter().map(|g| upload(g, &vec![1u32; n]).unwrap()).collect();
    (bufs, vec![(n * m.ranks()) as u64; m.ranks()])
}

fn views(bufs: &[DeviceBuffer<u32>]) -> Vec<&DeviceSlice<u32>> {
    bufs.iter().map(|b| b.as_slice()).collect()
}

#[test]
fn a_faulting_rank_fails_the_call_in_time_and_the_process_exits() {
    const NAME: &str = "a_faulting_rank_fails_the_call_in_time_and_the_process_exits";
    if std::env::var_os(SCENARIO).is_some() {
        return faulting_rank_scenario();
    }
    match multi(NAME) {
        Some(m) => drop(m),
        None => return,
    }
    let (status, output, took) = run_child(NAME);
    let status = status.unwrap_or_else(|| panic!("the child hung: killed after {:?}; its output:\n{}", took, output));
    assert!(status.success() && output.contains(PASSED), "the child failed ({}) in {:?}:\n{}", status, took, output);
    let report = output.lines().find(|l| l.contains(PASSED)).unwrap_or_default();
    println!("child exited in {:?}: {}", took, report);
}

/// In the child: the last rank's shard runs far past its allocation, so its kernel faults
/// while the other ranks wait for it in the all-reduce.
fn faulting_rank_scenario() {
    let m = cudakernels::open_all().expect("the parent joined these GPUs");
    let (ranks, faulting, n) = (m.ranks(), m.ranks() - 1, 1 << 20);
    let (good, want) = ones(&m, n);
    assert_eq!(m.sum(&views(&good)).unwrap(), want, "healthy before the fault");
    // A real allocation of the faulting rank's device (so it passes the library's checks on
    // the buffer's start) lent as far longer than it is: the kernel reads unmapped memory.
    let small = m.gpus()[faulting].default_stream().alloc_zeroed::<u32>(1024).expect("a small buffer");
    // SAFETY: the host never reads it; the kernel that does faults, which is the point.
    let bogus =
        unsafe { DeviceSlice::from_raw_parts(DevicePointer::<u32>::from_raw(small.as_device_ptr().as_raw()), 1 << 34) };
    let mut shards = views(&good);
    shards[faulting] = &bogus;
    let start = Instant::now();
    let failure = m.sum(&shards).expect_err("a faulting rank fails the call");
    let took = start.elapsed();
    match &failure {
        Error::RankFailed { rank, cause } => {
            assert_eq!(*rank, faulting, "{}", failure);
            assert!(matches!(**cause, Error::Cuda { .. }), "{}", failure);
        }
        other => panic!("expected RankFailed, got {:?}", other),
    }
    assert!(took < CALL_LIMIT, "the failing call took {:?}", took);
    let later = Instant::now();
    assert_eq!(m.sum(&views(&good)), Err(failure.clone()), "a later call returns the failure");
    assert_eq!(m.synchronize(), Err(failure.clone()));
    assert!(later.elapsed() < Duration::from_secs(1), "later calls took {:?}", later.elapsed());
    drop(shards);
    drop(small);
    drop(good);
    drop(m);
    println!("{} rank {} of {} failed in {:?}: {}", PASSED, faulting, ranks, took, failure);
}

/// Runs this test binary again, only `test`, with `SCENARIO` set: its exit status (`None` when
/// it was killed after `CHILD_LIMIT`), its stdout and stderr, and how long it ran.
fn run_child(test: &str) -> (Option<ExitStatus>, String, Duration) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut child = Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(SCENARIO, "fault")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the child");
    let readers = [drain(child.stdout.take()), drain(child.stderr.take())];
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll the child") {
            break Some(status);
        }
        if start.elapsed() > CHILD_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = start.elapsed();
    let output: Vec<String> = readers.into_iter().map(|r| r.join().unwrap_or_default()).collect();
    (status, output.join("\n"), took)
}

/// Reads `pipe` to its end on a thread (a full pipe would stall the child).
fn drain(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    })
}

#[test]
fn a_stalled_rank_times_out_and_the_multigpu_refuses_work() {
    let limit = Duration::from_secs(1);
    let m = match multi("a_stalled_rank_times_out_and_the_multigpu_refuses_work") {
        Some(m) => m.with_wait_limit(limit),
        None => return,
    };
    let stalled = m.ranks() - 1;
    let (bufs, want) = ones(&m, 4096);
    assert_eq!(m.sum(&views(&bufs)).unwrap(), want, "healthy before the stall");
    // The last rank's stream stalls in a host function until released: released after the
    // wait, or by a watchdog long after the limit, so that a wait on it ends either way.
    let release = Arc::new(AtomicBool::new(false));
    let held = release.clone();
    let stall = move || {
        while !held.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    m.gpus()[stalled].default_stream().stream().unwrap().add_callback(Box::new(stall)).unwrap();
    let watchdog = release.clone();
    std::thread::spawn(move || {
        std::thread::sleep(4 * limit);
        watchdog.store(true, Ordering::Release);
    });
    let start = Instant::now();
    let result = m.synchronize();
    let took = start.elapsed();
    release.store(true, Ordering::Release);
    let failure = Error::RankFailed { rank: stalled, cause: Box::new(Error::TimedOut { limit }) };
    assert_eq!(result, Err(failure.clone()));
    // The wait gives up at the limit and aborts the communicators; NCCL's abort itself waits
    // for device work, and a host function holding the stream is work only its release ends
    // (the watchdog's, at 4 × limit). A stall inside NCCL's kernels is what abort ends at once.
    assert!(took >= limit && took < 4 * limit + Duration::from_secs(2), "the wait took {:?}", took);
    assert_eq!(m.sum(&views(&bufs)), Err(failure), "a later call returns the failure");
    drop(bufs);
    drop(m);
}

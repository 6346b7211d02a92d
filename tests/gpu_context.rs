//! Threads, contexts and stream order: a fresh thread with only the handle, what is current on
//! the calling thread after a call, the streams' flags, and the upload-then-call pattern.
mod common;
use common::{gpu, upload, Rng};
use cudakernels::cust::context::legacy::{Context, ContextFlags};
use cudakernels::cust::device::Device;
use cudakernels::cust::memory::{DeviceBuffer, DeviceSlice};
use cudakernels::cust::sys;
use cudakernels::{Error, Gpu, GpuStream, ReduceStrategy};
use std::sync::Arc;

/// The calling thread's current context, as a number (0: none).
fn current_context() -> usize {
    let mut context = std::ptr::null_mut();
    // SAFETY: cuCtxGetCurrent writes one context handle into `context`.
    let result = unsafe { sys::cuCtxGetCurrent(&mut context) };
    assert_eq!(result, sys::CUresult::CUDA_SUCCESS, "cuCtxGetCurrent");
    context as usize
}

fn random_words(rng: &mut Rng, len: usize) -> Vec<u32> {
    (0..len).map(|_| rng.next_u64() as u32).collect()
}

fn wide_sum(host: &[u32]) -> u64 {
    host.iter().map(|&v| v as u64).sum()
}

/// Runs `work` on a new thread and passes its panic on.
fn on_fresh_thread(work: impl FnOnce() + Send + 'static) {
    std::thread::spawn(work).join().expect("the thread's checks failed");
}

/// Uploads, sums and downloads on `s` with its own helpers, exact; `what` names the stream.
fn round_trip(s: &GpuStream, rng: &mut Rng, what: &str) {
    let host = random_words(rng, (1 << 20) + 3);
    let want = wide_sum(&host);
    // A poisoned buffer of the zeroed one's size, freed first: the zeroed one may reuse its memory.
    drop(s.upload(&vec![u64::MAX; 4096]).unwrap());
    let zeros = s.alloc_zeroed::<u64>(4096).unwrap();
    assert!(s.download(&zeros).unwrap().iter().all(|&v| v == 0), "{}: alloc_zeroed", what);
    let x = s.upload(&host).unwrap();
    assert_eq!(s.download(&x).unwrap(), host, "{}: upload then download, seed {}", what, rng.seed);
    assert_eq!(s.sum(&x).unwrap(), want, "{}: sum, seed {}", what, rng.seed);
    let mut out = s.upload(&[0x5a5a_5a5a_5a5a_5a5au64]).unwrap();
    s.sum_into(&x, &mut out).unwrap();
    assert_eq!(s.download(&out).unwrap(), vec![want], "{}: sum_into, seed {}", what, rng.seed);
}

#[test]
fn a_fresh_thread_with_only_the_handle_uploads_sums_and_downloads() {
    let gpu = match gpu("a_fresh_thread_with_only_the_handle_uploads_sums_and_downloads") {
        Some(g) => Arc::new(g),
        None => return,
    };
    let seed = Rng::fresh("fresh_thread").seed;
    on_fresh_thread(move || {
        assert_eq!(current_context(), 0, "a fresh thread starts with no context");
        let mut rng = Rng::with_seed(seed);
        round_trip(gpu.default_stream(), &mut rng, "the default stream");
        round_trip(&gpu.new_stream().unwrap(), &mut rng, "a new stream");
    });
}

/// Entry points, `download` and `synchronize` on a thread with no context leave it with none;
/// `upload` and `new_stream` leave the device's context current (as documented).
#[test]
fn entry_points_give_a_thread_without_a_context_none_back() {
    let gpu = match gpu("entry_points_give_a_thread_without_a_context_none_back") {
        Some(g) => Arc::new(g),
        None => return,
    };
    let mut rng = Rng::fresh("no_context");
    let host = random_words(&mut rng, 100_003);
    let (x, out) = (upload(&host), upload(&[u32::MAX]));
    let what = format!("seed {}", rng.seed);
    let primary = current_context(); // open made it current on this thread
    on_fresh_thread(move || {
        let (s, mut out) = (gpu.default_stream(), out);
        assert_eq!(current_context(), 0, "a fresh thread starts with no context");
        assert_eq!(s.sum(&x).unwrap(), wide_sum(&host), "{}", what);
        assert_eq!(current_context(), 0, "after sum");
        let lo_hi = (*host.iter().min().unwrap(), *host.iter().max().unwrap());
        assert_eq!(s.minmax(&x).unwrap(), lo_hi, "{}", what);
        s.reduce_into(cudakernels::TypedOp::Max, &x, &mut out).unwrap();
        assert_eq!(current_context(), 0, "after minmax and reduce_into");
        assert_eq!(s.download(&out).unwrap(), vec![lo_hi.1], "{}", what);
        s.synchronize().unwrap();
        assert_eq!(current_context(), 0, "after download and synchronize");
        let other = gpu.new_stream().unwrap();
        assert_eq!(current_context(), primary, "new_stream leaves the device's context current");
        drop(other);
        assert_eq!(current_context(), primary);
    });
}

/// With a context of the caller's own current (made with cuCtxCreate), calls work in the
/// device's primary context and the caller's is current again after each; memory allocated
/// in the caller's context is refused, since the primary context does not map it.
#[test]
fn entry_points_give_a_callers_own_context_back_and_refuse_its_memory() {
    let gpu = match gpu("entry_points_give_a_callers_own_context_back_and_refuse_its_memory") {
        Some(g) => Arc::new(g),
        None => return,
    };
    let mut rng = Rng::fresh("own_context");
    let host: Vec<i32> = (0..300_001).map(|_| rng.next_u64() as i32).collect();
    let x = upload(&host);
    let want = host.iter().fold(0i32, |a, &b| a.wrapping_add(b));
    on_fresh_thread(move || {
        let device = Device::get_device(gpu.ordinal()).unwrap();
        let own = Context::create_and_push(ContextFlags::SCHED_AUTO, device).expect("cuCtxCreate");
        let mine = current_context();
        assert_ne!(mine, 0);
        let s = gpu.default_stream();
        assert_eq!(s.reduce_sum(&x, ReduceStrategy::Auto).unwrap(), want);
        assert_eq!(current_context(), mine, "after reduce_sum");
        assert_eq!(s.download(&x).unwrap(), host);
        assert_eq!(current_context(), mine, "after download");
        let foreign = DeviceBuffer::from_slice(&[7u32; 1024]).unwrap();
        let address = foreign.as_device_ptr().as_raw();
        assert_eq!(s.sum(&foreign), Err(Error::ForeignContext { what: "input", address }));
        assert_eq!(current_context(), mine, "after a refused call");
        s.synchronize().unwrap();
        drop(foreign);
        drop(own);
        assert_eq!(current_context(), 0, "the destroyed context was popped");
    });
}

/// With two devices, device 1's memory lent to a stream of device 0 gets `WrongDevice`.
#[test]
fn memory_of_another_device_gets_wrong_device() {
    let gpu = match gpu("memory_of_another_device_gets_wrong_device") {
        Some(g) => g,
        None => return,
    };
    if Device::num_devices().unwrap() < 2 {
        eprintln!("memory_of_another_device_gets_wrong_device: one device, nothing to check");
        return;
    }
    let second = cudakernels::open_with(1, cudakernels::ImageChoice::Auto).unwrap();
    let there = second.default_stream().upload(&[1u32; 4096]).unwrap();
    let s = gpu.default_stream();
    assert_eq!(s.sum(&there), Err(Error::WrongDevice { what: "input", expected: 0, actual: 1 }));
    let mut out_there = second.default_stream().alloc_zeroed::<u64>(1).unwrap();
    let x = s.upload(&[1u32; 64]).unwrap();
    assert_eq!(s.sum_into(&x, &mut out_there), Err(Error::WrongDevice { what: "out", expected: 0, actual: 1 }));
}

/// The raw flags a library stream was created with.
fn stream_flags(s: &GpuStream) -> u32 {
    let mut flags = u32::MAX;
    // SAFETY: a live stream handle; cuStreamGetFlags writes one word into `flags`.
    let result = unsafe { sys::cuStreamGetFlags(s.as_raw(), &mut flags) };
    assert_eq!(result, sys::CUresult::CUDA_SUCCESS, "cuStreamGetFlags");
    flags
}

#[test]
fn the_library_streams_are_blocking_streams() {
    let gpu = match gpu("the_library_streams_are_blocking_streams") {
        Some(g) => g,
        None => return,
    };
    let blocking = sys::CUstream_flags::CU_STREAM_DEFAULT as u32;
    assert_eq!(stream_flags(gpu.default_stream()), blocking, "the default stream");
    assert_eq!(stream_flags(&gpu.new_stream().unwrap()), blocking, "a new stream");
}

/// The README's pattern: a cust upload from pageable memory (its DMA may land after it
/// returns), then at once a call on a library stream, which waits for the legacy stream.
#[test]
fn a_large_pageable_upload_then_a_call_on_another_stream_is_exact() {
    let gpu: Gpu = match gpu("a_large_pageable_upload_then_a_call_on_another_stream_is_exact") {
        Some(g) => g,
        None => return,
    };
    let mut rng = Rng::fresh("upload_then_call");
    let ready = gpu.new_stream().unwrap();
    for round in 0..3 {
        let host = random_words(&mut rng, 1 << 26);
        let want = wide_sum(&host);
        let x = DeviceBuffer::from_slice(&host).unwrap();
        assert_eq!(ready.sum(&x).unwrap(), want, "seed {} round {}: a stream made before", rng.seed, round);
        let y = DeviceBuffer::from_slice(&host).unwrap();
        let view: &DeviceSlice<u32> = &y;
        assert_eq!(
            gpu.new_stream().unwrap().sum(view).unwrap(),
            want,
            "seed {} round {}: a new stream",
            rng.seed,
            round
        );
        let z = DeviceBuffer::from_slice(&host).unwrap();
        assert_eq!(
            gpu.default_stream().sum(&z).unwrap(),
            want,
            "seed {} round {}: the default stream",
            rng.seed,
            round
        );
    }
}

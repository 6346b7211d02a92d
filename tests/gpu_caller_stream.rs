//! The raw entry points and the caller's stream: a program that owns its stream and its
//! stream-ordered memory (as cudarc programs do) calls the library on them, with no wait between
//! its own kernels and the library's.
mod common;
use common::Rng;
use cudakernels::cust::module::Module;
use cudakernels::cust::sys;
use cudakernels::{bf16, Error, Gpu, GpuStream, SgemvBatch, SgemvOptions, TypedOp};
use std::ffi::c_void;

/// `slow_fill(out, n, seed, spins)`: thread i sleeps `spins` µs, then writes
/// `pattern(i, seed)` to `out[i]`. Long enough that a reader not ordered after it sees the
/// poison.
const SLOW_FILL_PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry slow_fill(.param .u64 out, .param .u32 n, .param .u32 seed, .param .u32 spins)
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<5>;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.s32 %r4, %r1, %r2, %r3;
    ld.param.u32 %r5, [n];
    setp.ge.u32 %p1, %r4, %r5;
    @%p1 bra DONE;
    ld.param.u32 %r6, [spins];
    mov.u32 %r7, 0;
SPIN:
    setp.ge.u32 %p2, %r7, %r6;
    @%p2 bra WRITE;
    nanosleep.u32 1000;
    add.u32 %r7, %r7, 1;
    bra SPIN;
WRITE:
    ld.param.u32 %r9, [seed];
    xor.b32 %r8, %r4, %r9;
    mul.lo.u32 %r8, %r8, -1640531535;
    shr.u32 %r8, %r8, 24;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r8;
DONE:
    ret;
}
"#;

/// What `slow_fill` writes at `i`.
fn pattern(i: u32, seed: u32) -> u32 {
    (i ^ seed).wrapping_mul(2_654_435_761) >> 24
}

fn ok(result: sys::CUresult, call: &str) {
    assert_eq!(result, sys::CUresult::CUDA_SUCCESS, "{}", call);
}

/// A non-blocking stream the test makes and destroys, as a cudarc or runtime program does.
struct CallerStream(sys::CUstream);

impl CallerStream {
    fn new() -> CallerStream {
        let mut stream = std::ptr::null_mut();
        // SAFETY: writes one stream handle.
        ok(
            unsafe { sys::cuStreamCreate(&mut stream, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32) },
            "cuStreamCreate",
        );
        CallerStream(stream)
    }

    fn synchronize(&self) {
        // SAFETY: a live stream.
        ok(unsafe { sys::cuStreamSynchronize(self.0) }, "cuStreamSynchronize");
    }
}

impl Drop for CallerStream {
    fn drop(&mut self) {
        // SAFETY: made by cuStreamCreate, destroyed once.
        unsafe { sys::cuStreamDestroy_v2(self.0) };
    }
}

/// Stream-ordered device memory (`cuMemAllocAsync`), freed on its stream.
struct PoolBuffer<'s> {
    ptr: u64,
    bytes: usize,
    stream: &'s CallerStream,
}

impl<'s> PoolBuffer<'s> {
    /// `bytes` bytes, each set to `poison`, on `stream`.
    fn new(stream: &'s CallerStream, bytes: usize, poison: u8) -> PoolBuffer<'s> {
        let mut ptr = 0;
        // SAFETY: writes one device address; the memset covers the allocation, in stream order.
        unsafe {
            ok(sys::cuMemAllocAsync(&mut ptr, bytes.max(1), stream.0), "cuMemAllocAsync");
            ok(sys::cuMemsetD8Async(ptr, poison, bytes, stream.0), "cuMemsetD8Async");
        }
        PoolBuffer { ptr, bytes, stream }
    }

    fn upload<T: Copy>(stream: &'s CallerStream, host: &[T]) -> PoolBuffer<'s> {
        let buffer = PoolBuffer::new(stream, std::mem::size_of_val(host), 0xff);
        // SAFETY: `host` holds `bytes` bytes; a copy from pageable memory has staged them when
        // it returns, so `host` may go after.
        ok(
            unsafe { sys::cuMemcpyHtoDAsync_v2(buffer.ptr, host.as_ptr() as *const c_void, buffer.bytes, stream.0) },
            "cuMemcpyHtoDAsync",
        );
        buffer
    }

    /// The contents, copied after the stream's work so far.
    fn download<T: Copy + Default>(&self) -> Vec<T> {
        let mut host = vec![T::default(); self.bytes / std::mem::size_of::<T>()];
        // SAFETY: `host` holds the buffer's bytes; the wait below finishes the copy.
        ok(
            unsafe { sys::cuMemcpyDtoHAsync_v2(host.as_mut_ptr() as *mut c_void, self.ptr, self.bytes, self.stream.0) },
            "cuMemcpyDtoHAsync",
        );
        self.stream.synchronize();
        host
    }
}

impl Drop for PoolBuffer<'_> {
    fn drop(&mut self) {
        // SAFETY: freed once, in the order of the stream its users ran on.
        unsafe { sys::cuMemFreeAsync(self.ptr, self.stream.0) };
    }
}

/// Launches `slow_fill` over `n` u32 at `out` on `stream`.
fn slow_fill(module: &Module, stream: &CallerStream, out: u64, n: u32, seed: u32, spins: u32) {
    let f = module.get_function("slow_fill").expect("slow_fill");
    let (mut out, mut n_, mut seed, mut spins) = (out, n, seed, spins);
    let mut params = [
        &mut out as *mut u64 as *mut c_void,
        &mut n_ as *mut u32 as *mut c_void,
        &mut seed as *mut u32 as *mut c_void,
        &mut spins as *mut u32 as *mut c_void,
    ];
    let grid = (n + 255) / 256;
    // SAFETY: the parameters match slow_fill's; `out` holds n u32 until the stream has run it.
    let result = unsafe {
        sys::cuLaunchKernel(f.to_raw(), grid, 1, 1, 256, 1, 1, 0, stream.0, params.as_mut_ptr(), std::ptr::null_mut())
    };
    ok(result, "cuLaunchKernel");
}

fn borrow(gpu: &Gpu, stream: &CallerStream) -> GpuStream {
    // SAFETY: the stream outlives the GpuStream in every test (declared before it).
    unsafe { gpu.borrow_stream(stream.0) }.expect("borrow the caller's stream")
}

#[test]
fn library_calls_on_the_callers_stream_follow_its_kernels_and_precede_its_copies() {
    let gpu = match common::gpu("library_calls_on_the_callers_stream_follow_its_kernels_and_precede_its_copies") {
        Some(gpu) => gpu,
        None => return,
    };
    let mut rng = Rng::fresh("caller_stream_order");
    let module = Module::from_ptx(SLOW_FILL_PTX, &[]).expect("load slow_fill");
    let stream = CallerStream::new();
    let s = borrow(&gpu, &stream);
    let n = (1u32 << 20) + 37;
    let input = PoolBuffer::new(&stream, n as usize * 4, 0xff);
    for round in 0..3 {
        let seed = rng.next_u64() as u32;
        let want: Vec<u32> = (0..n).map(|i| pattern(i, seed)).collect();
        let ctx = format!("round {} seed {:#x} (rng seed {})", round, seed, rng.seed);

        // A value call right after the caller's kernel: no wait in between.
        slow_fill(&module, &stream, input.ptr, n, seed, 200);
        // SAFETY: `input` holds n u32 on the stream's device until the stream has run the call.
        let sum = unsafe { s.sum_raw::<u32>(input.ptr, n as usize) }.expect("sum_raw");
        assert_eq!(sum, want.iter().map(|&v| v as u64).sum::<u64>(), "sum after the caller's kernel, {}", ctx);

        // An enqueue-only call, then the caller's copy of its output: no wait in between.
        slow_fill(&module, &stream, input.ptr, n, seed ^ 0x5a5a, 200);
        let want: Vec<u32> = (0..n).map(|i| pattern(i, seed ^ 0x5a5a)).collect();
        let value = PoolBuffer::new(&stream, 4, 0xa5);
        let index = PoolBuffer::new(&stream, 8, 0xa5);
        // SAFETY: every buffer holds its length on the device until the stream has run the call.
        unsafe { s.argmax_into_raw::<u32>(input.ptr, n as usize, value.ptr, 1, index.ptr, 1) }
            .expect("argmax_into_raw");
        let (got_value, got_index) = (value.download::<u32>()[0], index.download::<u64>()[0]);
        let max = *want.iter().max().unwrap();
        let first = want.iter().position(|&v| v == max).unwrap() as u64;
        assert_eq!((got_value, got_index), (max, first), "argmax after the caller's kernel, {}", ctx);
    }
    drop(s);
    // The library never destroys the caller's stream: it still takes work.
    let after = PoolBuffer::upload(&stream, &[3u32, 9, 4]);
    assert_eq!(after.download::<u32>(), vec![3, 9, 4]);
}

#[test]
fn raw_entry_points_take_stream_ordered_memory_on_the_callers_stream() {
    let gpu = match common::gpu("raw_entry_points_take_stream_ordered_memory_on_the_callers_stream") {
        Some(gpu) => gpu,
        None => return,
    };
    let mut rng = Rng::fresh("caller_stream_raw");
    let stream = CallerStream::new();
    let s = borrow(&gpu, &stream);
    for &n in &[1usize, 31, 32, 33, 1023, 1025, 100_003] {
        let ctx = format!("n = {} (seed {})", n, rng.seed);
        // f32 sum: |error| ≤ n·ε·Σ|x| covers any summation order.
        let x: Vec<f32> = (0..n).map(|_| rng.range(-1.0, 1.0) as f32).collect();
        let dx = PoolBuffer::upload(&stream, &x);
        // SAFETY (each call below): every buffer holds its length on the stream's device until
        // the stream has run the call; outputs are read after a wait on the stream.
        let sum = unsafe { s.sum_raw::<f32>(dx.ptr, n) }.expect("sum_raw");
        let exact: f64 = x.iter().map(|&v| v as f64).sum();
        let bound = n as f64 * f32::EPSILON as f64 * x.iter().map(|&v| v.abs() as f64).sum::<f64>();
        assert!((sum as f64 - exact).abs() <= bound, "sum {} vs {} ± {}, {}", sum, exact, bound, ctx);

        // bf16 argmax: exact, first index of the largest.
        let h: Vec<bf16> = (0..n).map(|_| bf16::from_f64(rng.range(-100.0, 100.0).round())).collect();
        let dh = PoolBuffer::upload(&stream, &h);
        let got = unsafe { s.argmax_raw::<bf16>(dh.ptr, n) }.expect("argmax_raw");
        let max = h.iter().map(|v| v.to_f32()).fold(f32::NEG_INFINITY, f32::max);
        let first = h.iter().position(|v| v.to_f32() == max).unwrap() as u64;
        assert_eq!((got.value.to_f32(), got.index), (max, first), "argmax, {}", ctx);
    }
    // sgemv and the bf16 gemv, with small integers: every summation order is exact.
    for &(m, n) in &[(1usize, 1usize), (33, 31), (257, 129), (1000, 64)] {
        let ctx = format!("{}x{} (seed {})", m, n, rng.seed);
        let a: Vec<f32> = (0..m * n).map(|_| rng.below(7) as f32 - 3.0).collect();
        let x: Vec<f32> = (0..n).map(|_| rng.below(5) as f32 - 2.0).collect();
        let want: Vec<f32> = (0..m).map(|r| (0..n).map(|c| a[r * n + c] * x[c]).sum()).collect();
        let (da, dx) = (PoolBuffer::upload(&stream, &a), PoolBuffer::upload(&stream, &x));
        let dy = PoolBuffer::new(&stream, m * 4, 0xff);
        let opts = SgemvOptions::default();
        unsafe { s.sgemv_raw(m, n, da.ptr, m * n, dx.ptr, n, dy.ptr, m, opts) }.expect("sgemv_raw");
        assert_eq!(dy.download::<f32>(), want, "sgemv, {}", ctx);

        let ah: Vec<bf16> = a.iter().map(|&v| bf16::from_f32(v)).collect();
        let dah = PoolBuffer::upload(&stream, &ah);
        let dy = PoolBuffer::new(&stream, m * 4, 0xff);
        let batch = SgemvBatch::ONE;
        unsafe { s.gemv_raw::<bf16, f32, f32>(m, n, dah.ptr, m * n, dx.ptr, n, dy.ptr, m, batch, opts) }
            .expect("gemv_raw");
        assert_eq!(dy.download::<f32>(), want, "bf16 gemv, {}", ctx);
    }
}

#[test]
fn raw_entry_points_refuse_what_they_can_check() {
    let gpu = match common::gpu("raw_entry_points_refuse_what_they_can_check") {
        Some(gpu) => gpu,
        None => return,
    };
    let s = gpu.default_stream();
    let buffer = s.alloc_zeroed::<f32>(64).expect("alloc");
    let ptr = buffer.as_device_ptr().as_raw();
    // SAFETY (each call): the addresses lie inside `buffer` or are refused before any launch.
    assert_eq!(
        unsafe { s.sum_raw::<f32>(ptr + 2, 8) },
        Err(Error::Misaligned { what: "input", required: 4, address: ptr + 2 })
    );
    let host = vec![1.0f32; 64];
    let host_ptr = host.as_ptr() as u64;
    assert_eq!(
        unsafe { s.sum_raw::<f32>(host_ptr, 64) },
        Err(Error::NotDeviceMemory { what: "input", address: host_ptr })
    );
    let opts = SgemvOptions::default();
    assert!(matches!(
        unsafe { s.sgemv_raw(8, 8, ptr, 63, ptr, 8, ptr, 8, opts) },
        Err(Error::LengthMismatch { what: "A", .. })
    ));
    assert_eq!(unsafe { s.min_raw::<f32>(ptr, 0) }, Err(Error::Empty { op: "min" }));
    // An output inside the input it is computed from.
    let overlap = |what, with| Err(Error::Overlap { what, with });
    assert_eq!(unsafe { s.sum_into_raw::<f32>(ptr, 64, ptr + 4 * 63, 1) }, overlap("out", "input"));
    assert_eq!(unsafe { s.reduce_into_raw::<f32>(TypedOp::MinMax, ptr, 64, ptr + 4 * 62, 2) }, overlap("out", "input"));
    assert_eq!(unsafe { s.argmax_into_raw::<f32>(ptr + 128, 32, ptr + 128, 1, ptr, 1) }, overlap("values", "input"));
    assert_eq!(unsafe { s.argmax_into_raw::<f32>(ptr, 16, ptr + 64, 1, ptr + 56, 1) }, overlap("indices", "input"));
    // Beside the input is fine.
    assert_eq!(unsafe { s.sum_into_raw::<f32>(ptr, 63, ptr + 4 * 63, 1) }, Ok(()));
    s.synchronize().expect("synchronize");
}

#[test]
fn a_stream_of_another_context_is_refused() {
    let gpu = match common::gpu("a_stream_of_another_context_is_refused") {
        Some(gpu) => gpu,
        None => return,
    };
    let mut device = 0;
    let (mut context, mut stream, mut popped) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: a context of its own (made current by cuCtxCreate), one stream in it, then the
    // context popped so that the thread's is as before.
    unsafe {
        ok(sys::cuDeviceGet(&mut device, 0), "cuDeviceGet");
        ok(sys::cuCtxCreate_v2(&mut context, 0, device), "cuCtxCreate");
        ok(sys::cuStreamCreate(&mut stream, 0), "cuStreamCreate");
        ok(sys::cuCtxPopCurrent_v2(&mut popped), "cuCtxPopCurrent");
    }
    // SAFETY: a live stream, destroyed below after the refusal.
    let refused = unsafe { gpu.borrow_stream(stream) };
    assert_eq!(refused.err(), Some(Error::ForeignStream { ordinal: 0 }));
    // SAFETY: the stream and context made above, destroyed once.
    unsafe {
        ok(sys::cuStreamDestroy_v2(stream), "cuStreamDestroy");
        ok(sys::cuCtxDestroy_v2(context), "cuCtxDestroy");
    }
    // The library still works on this thread.
    let s = gpu.default_stream();
    let x = s.upload(&[1u32, 2, 3]).expect("upload");
    assert_eq!(s.sum(&x).expect("sum"), 6);
}

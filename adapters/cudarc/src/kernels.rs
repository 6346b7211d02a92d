//! [`Kernels`]: the library on one device, its streams borrowed from cudarc's, and what every
//! call does around the library's enqueue.
use crate::error::{Error, Result};
use cudakernels::{Gpu, GpuStream, ImageChoice};
use cudarc::driver::{CudaContext, CudaStream, DeviceSlice};
use std::sync::{Arc, Mutex, MutexGuard};

/// `CU_STREAM_PER_THREAD`: one handle for a different stream on every thread.
const PER_THREAD_STREAM: usize = 0x2;

/// The library's kernels on one device, for cudarc's streams and buffers of its primary context.
/// `Send + Sync`: share one per device. Every entry point takes the cudarc stream to enqueue on.
pub struct Kernels {
    /// Before `gpu`: dropping an entry waits for its stream.
    streams: Mutex<Vec<Arc<Borrowed>>>,
    gpu: Arc<Gpu>,
    ctx: Arc<CudaContext>,
}

/// A cudarc stream and the library stream that enqueues on it.
struct Borrowed {
    /// Before `stream`: its drop waits for the stream, which `stream` keeps alive.
    kernels: GpuStream,
    stream: Arc<CudaStream>,
}

impl Kernels {
    /// Opens the library on `ctx`'s device (as [`cudakernels::open_with`] does): the kernels
    /// load into the device's primary context, which `ctx` must be.
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Kernels> {
        check_primary(ctx)?;
        let ordinal = u32::try_from(ctx.ordinal()).map_err(|_| cudakernels::Error::NoDevice)?;
        Kernels::with_gpu(ctx, cudakernels::open_with(ordinal, ImageChoice::Auto)?)
    }

    /// The library already opened on `ctx`'s device: [`cudakernels::open`] before cudarc is
    /// touched gives `Error::NoDevice` without a GPU, before cudarc loads libcuda.
    /// `ctx` must be that device's primary context (`CudaContext::new`).
    pub fn with_gpu(ctx: &Arc<CudaContext>, gpu: impl Into<Arc<Gpu>>) -> Result<Kernels> {
        let gpu = gpu.into();
        check_primary(ctx)?;
        if ctx.ordinal() != gpu.ordinal() as usize {
            return Err(wrong_device("context", gpu.ordinal(), ctx.ordinal()));
        }
        Ok(Kernels { streams: Mutex::new(Vec::new()), gpu, ctx: ctx.clone() })
    }

    /// The library's handle of the device.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// The primary context the kernels run in.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Cudarc streams that have a library stream (and its scratch) now.
    pub fn borrowed_streams(&self) -> usize {
        self.lock().len()
    }

    /// Drops `stream`'s library stream and its scratch, after waiting for the stream: `false`
    /// where it had none. A later call on the stream makes a new one.
    pub fn release(&self, stream: &CudaStream) -> bool {
        let mut cache = self.lock();
        let at = cache.iter().position(|b| b.stream.cu_stream() == stream.cu_stream());
        let gone = at.map(|i| cache.remove(i));
        drop(cache);
        gone.is_some()
    }

    /// Checks `stream` and the buffers `lent` for a call and gives the library stream of
    /// `stream`. Fails with an error cudarc kept from earlier work: the waits of
    /// `device_ptr` would be skipped while one is pending.
    pub(crate) fn call<'s>(&self, stream: &'s Arc<CudaStream>, lent: &[Lent<'_>]) -> Result<Call<'s>> {
        let ctx = stream.context();
        if ctx.ordinal() != self.gpu.ordinal() as usize || ctx.cu_ctx() != self.ctx.cu_ctx() {
            return Err(cudakernels::Error::ForeignStream { ordinal: self.gpu.ordinal() }.into());
        }
        if stream.cu_stream() as usize == PER_THREAD_STREAM {
            let what = "cudarc's per-thread default stream: pass a stream of new_stream".into();
            return Err(cudakernels::Error::Unsupported { what }.into());
        }
        for l in lent {
            self.check_context(l.what, l.ctx)?;
        }
        stream.context().check_err()?;
        Ok(Call { stream, borrowed: self.borrowed(stream)? })
    }

    /// `WrongDevice` or `ForeignContext` unless `ctx` is this device's primary context.
    fn check_context(&self, what: &'static str, ctx: &CudaContext) -> Result<()> {
        if ctx.ordinal() != self.gpu.ordinal() as usize {
            return Err(wrong_device(what, self.gpu.ordinal(), ctx.ordinal()));
        }
        if ctx.cu_ctx() != self.ctx.cu_ctx() {
            // The address is not taken before the check: taking it has side effects.
            return Err(cudakernels::Error::ForeignContext { what, address: 0 }.into());
        }
        Ok(())
    }

    /// `stream`'s entry, made on its first call. A new entry first takes out the entries no one
    /// else holds (their streams dropped everywhere else), which drop after the lock.
    fn borrowed(&self, stream: &Arc<CudaStream>) -> Result<Arc<Borrowed>> {
        let mut cache = self.lock();
        if let Some(b) = cache.iter().find(|b| b.stream.cu_stream() == stream.cu_stream()) {
            return Ok(b.clone());
        }
        let (kept, unused): (Vec<_>, Vec<_>) =
            cache.drain(..).partition(|b| Arc::strong_count(b) > 1 || Arc::strong_count(&b.stream) > 1);
        *cache = kept;
        let handle = stream.cu_stream() as cudakernels::cust::sys::CUstream;
        // SAFETY: `handle` is a stream of this device's primary context (`call` checked its
        // context, and that it is not the per-thread handle), and the entry holds `stream`, so
        // the stream outlives the GpuStream, which the entry drops first. One per stream: the
        // lock is held from the lookup to the push.
        let made = unsafe { self.gpu.borrow_stream(handle) }.map(|kernels| {
            let b = Arc::new(Borrowed { kernels, stream: stream.clone() });
            cache.push(b.clone());
            b
        });
        drop(cache);
        drop(unused);
        Ok(made?)
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Arc<Borrowed>>> {
        self.streams.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn check_primary(ctx: &CudaContext) -> Result<()> {
    if !ctx.is_primary() {
        return Err(cudakernels::Error::ForeignContext { what: "context", address: ctx.cu_ctx() as u64 }.into());
    }
    Ok(())
}

fn wrong_device(what: &'static str, expected: u32, actual: usize) -> Error {
    cudakernels::Error::WrongDevice { what, expected, actual: u32::try_from(actual).unwrap_or(u32::MAX) }.into()
}

/// A buffer lent to a call: its name in errors and the context it was allocated in.
pub(crate) struct Lent<'a> {
    what: &'static str,
    ctx: &'a CudaContext,
}

/// `buf` lent to a call as `what`.
pub(crate) fn lent<'a, T>(what: &'static str, buf: &'a impl DeviceSlice<T>) -> Lent<'a> {
    Lent { what, ctx: buf.stream().context() }
}

/// One call on a checked stream: its addresses are taken between [`Kernels::call`] and
/// [`Call::ready`], and their guards given to [`Call::done`] after the library enqueued.
pub(crate) struct Call<'s> {
    stream: &'s Arc<CudaStream>,
    borrowed: Arc<Borrowed>,
}

impl Call<'_> {
    /// The library stream that enqueues on the call's stream.
    pub(crate) fn kernels(&self) -> &GpuStream {
        &self.borrowed.kernels
    }

    /// Fails where a wait that taking an address enqueued failed (cudarc keeps that error in
    /// the context): the library must not enqueue then.
    pub(crate) fn ready(&self) -> Result<()> {
        Ok(self.stream.context().check_err()?)
    }

    /// Drops `guards` (recording the buffers' events after the enqueued work), then gives the
    /// library's result. Where a record failed, waits for the stream, as no event orders later
    /// work after this call's, and gives that error.
    pub(crate) fn done<R, G>(self, result: cudakernels::Result<R>, guards: G) -> Result<R> {
        drop(guards);
        let value = result?;
        if let Err(e) = self.stream.context().check_err() {
            let _ = self.stream.synchronize();
            return Err(e.into());
        }
        Ok(value)
    }
}

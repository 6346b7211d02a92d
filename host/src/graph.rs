//! CUDA graphs recorded from the library's streams: one launch per stream then replays all
//! that was enqueued there (kernels and NCCL collectives alike), with none of the host's
//! per-call enqueue work.
use crate::error::{driver, Result};
use crate::gpu::GpuStream;
use cust::sys::{self as cu, CUstreamCaptureMode};
use std::ptr::null_mut;

/// One instantiated graph, launched on the stream it was captured from.
pub(crate) struct Graph {
    exec: cu::CUgraphExec,
}

impl Graph {
    /// Records what `enqueue` puts on `streams` (each bound to its device; nothing else may
    /// enqueue on them meanwhile) as one graph per stream, in order. Nothing runs. The
    /// captures are ended whatever happens, so no stream is left capturing.
    pub(crate) fn capture(streams: &[&GpuStream], enqueue: impl FnOnce() -> Result<()>) -> Result<Vec<Graph>> {
        let mut begun = 0;
        let mut result = Ok(());
        for s in streams {
            // Relaxed: the enqueue may look up occupancy or load NCCL's state meanwhile.
            let mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
            // SAFETY: a live stream of the bound context.
            result = s
                .bind()
                .and_then(|_| driver(unsafe { cu::cuStreamBeginCapture_v2(raw(s), mode) }, "cuStreamBeginCapture"));
            if result.is_err() {
                break;
            }
            begun += 1;
        }
        if result.is_ok() {
            result = enqueue();
        }
        let mut graphs = Vec::new();
        for s in &streams[..begun] {
            let mut graph = null_mut();
            // SAFETY: this stream's capture was begun above; `graph` receives the result.
            let ended = s
                .bind()
                .and_then(|_| driver(unsafe { cu::cuStreamEndCapture(raw(s), &mut graph) }, "cuStreamEndCapture"));
            if result.is_ok() && ended.is_ok() {
                let mut exec = null_mut();
                // SAFETY: `graph` is the captured graph; `exec` receives its instance.
                result = driver(unsafe { cu::cuGraphInstantiateWithFlags(&mut exec, graph, 0) }, "cuGraphInstantiate");
                if result.is_ok() {
                    graphs.push(Graph { exec });
                }
            } else {
                result = result.and(ended);
            }
            if !graph.is_null() {
                // SAFETY: the template is no longer needed once instantiated (or failed).
                unsafe { cu::cuGraphDestroy(graph) };
            }
        }
        result.map(|_| graphs)
    }

    /// Enqueues one replay on `stream`, the one it was captured from (bound by the caller).
    pub(crate) fn launch(&self, stream: &GpuStream) -> Result<()> {
        // SAFETY: a live instance; the stream belongs to the same device.
        driver(unsafe { cu::cuGraphLaunch(self.exec, raw(stream)) }, "cuGraphLaunch")
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: the owner has waited for every launch (see `RowsGraph`'s drop).
        unsafe { cu::cuGraphExecDestroy(self.exec) };
    }
}

/// An event that orders two streams of one device: work enqueued on `later` after
/// [`Fence::order`] waits for what `earlier` held before it.
pub(crate) struct Fence {
    event: cu::CUevent,
}

impl Fence {
    /// A fence in the bound context.
    pub(crate) fn new() -> Result<Fence> {
        let mut event = null_mut();
        // SAFETY: `event` receives a new event; timing is off (an ordering-only event).
        driver(
            unsafe { cu::cuEventCreate(&mut event, cu::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32) },
            "cuEventCreate",
        )?;
        Ok(Fence { event })
    }

    /// Makes `later` wait for everything enqueued on `earlier` so far (both bound).
    pub(crate) fn order(&self, earlier: &GpuStream, later: &GpuStream) -> Result<()> {
        // SAFETY: a live event and two live streams of its device.
        driver(unsafe { cu::cuEventRecord(self.event, raw(earlier)) }, "cuEventRecord")?;
        driver(unsafe { cu::cuStreamWaitEvent(raw(later), self.event, 0) }, "cuStreamWaitEvent")
    }
}

impl Drop for Fence {
    fn drop(&mut self) {
        // SAFETY: a recorded event may be destroyed before it completes (the driver defers it).
        unsafe { cu::cuEventDestroy_v2(self.event) };
    }
}

fn raw(s: &GpuStream) -> cu::CUstream {
    s.stream().as_inner()
}

//! The devices' primary contexts, retained once per process and never released, and the scope
//! that makes one current for a call and gives the caller's context back after it.
use crate::error::{Check, Result};
use cust::context::legacy::ContextStack;
use cust::context::{Context, CurrentContext};
use cust::device::Device;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, Once};

/// Retained primary contexts by device ordinal.
type Retained = Mutex<Vec<Option<&'static Context>>>;

/// The process-wide table of retained primary contexts, made on first use and never freed.
fn retained() -> &'static Retained {
    static MADE: Once = Once::new();
    static TABLE: AtomicPtr<Retained> = AtomicPtr::new(std::ptr::null_mut());
    MADE.call_once(|| TABLE.store(Box::leak(Box::new(Mutex::new(Vec::new()))), Ordering::Release));
    // SAFETY: `call_once` returns only after the store above, which happens once; the table is
    // leaked, so the reference is valid for the rest of the process.
    unsafe { &*TABLE.load(Ordering::Acquire) }
}

/// Device `ordinal`'s primary context, retained on the first call for this device and never
/// released, and made current on the calling thread.
///
/// Why never released: a primary context stays valid while retained, and the driver frees every
/// allocation in it when the last retain goes. A cust `DeviceBuffer` frees its address with
/// `cuMemFree` when it drops, in whatever context is current then, so one that outlived a
/// released context would free, once the device is opened again, whatever new allocation got
/// its address. Kept for the life of the process (as the CUDA runtime keeps its own), the
/// context outlives every buffer made in it, and each buffer frees its own memory.
pub(super) fn retain_primary(device: Device, ordinal: u32) -> Result<&'static Context> {
    let mut table = retained().lock().unwrap_or_else(|e| e.into_inner());
    let slot = ordinal as usize;
    if table.len() <= slot {
        table.resize(slot + 1, None);
    }
    let context = match table[slot] {
        Some(context) => context,
        None => {
            let context: &'static Context =
                Box::leak(Box::new(Context::new(device).check("cuDevicePrimaryCtxRetain")?));
            table[slot] = Some(context);
            context
        }
    };
    bind(context)?;
    Ok(context)
}

/// Whether `context` is the calling thread's current context. A failed query counts as not
/// current: the caller then sets or pushes it, and that call reports the error.
fn is_current(context: &Context) -> bool {
    let mut current = std::ptr::null_mut();
    // SAFETY: cuCtxGetCurrent writes one context handle into `current`.
    let ok = unsafe { cust::sys::cuCtxGetCurrent(&mut current) } == cust::sys::CUresult::CUDA_SUCCESS;
    ok && current == context.as_raw()
}

/// Makes `context` current on the calling thread (replacing the top of its context stack, as
/// `cuCtxSetCurrent` does) and leaves it so.
pub(super) fn bind(context: &Context) -> Result<()> {
    if is_current(context) {
        return Ok(());
    }
    CurrentContext::set_current(context).check("cuCtxSetCurrent")
}

/// A call's hold on a device's context: [`enter`] pushed it onto the calling thread's context
/// stack if it was not already current, and dropping this pops it, so the caller's context (or
/// none) is current again. Not `Send`: it pops on the thread that pushed.
#[must_use = "the context is given back when this drops"]
pub(crate) struct Entered {
    pushed: bool,
    _this_thread: PhantomData<*mut ()>,
}

/// Makes `context` current for as long as the returned [`Entered`] lives. Free (one
/// `cuCtxGetCurrent`) when it already is current, as on a thread the caller bound.
pub(super) fn enter(context: &Context) -> Result<Entered> {
    let pushed = !is_current(context);
    if pushed {
        ContextStack::push(context).check("cuCtxPushCurrent")?;
    }
    Ok(Entered { pushed, _this_thread: PhantomData })
}

impl Drop for Entered {
    fn drop(&mut self) {
        if self.pushed {
            // The top of the stack is the context `enter` pushed: nothing in the library sets
            // another while an `Entered` lives (nested entries of the same context push nothing).
            let _ = ContextStack::pop();
        }
    }
}

//! The device handle: context, module (the kernel image, loaded once), stream and scratch space.
use crate::error::{alloc, alloc_zeroed, Check, Error, Result};
use crate::image::{ImageChoice, KernelImages, LoadedImage, MIN_COMPUTE_CAPABILITY};
use crate::ladder::ladder_names;
use cust::context::{Context, CurrentContext};
use cust::device::{Device, DeviceAttribute};
use cust::function::{BlockSize, Function, GridSize};
use cust::memory::{CopyDestination, DeviceBuffer, DeviceCopy, DeviceSlice};
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use std::cell::RefCell;
use std::collections::HashMap;

/// Per-`Gpu` scratch: per-block partials (grown on demand), the zeroed ticket counter of
/// the single-launch reductions and the flagged slots (zero between launches). Used in
/// stream order only.
pub(crate) struct Workspace {
    pub partials: DeviceBuffer<u64>,
    pub counter: DeviceBuffer<u32>,
    pub flagged: DeviceBuffer<u64>,
}

/// One CUDA device with the library's kernels loaded.
///
/// Entry points enqueue on the handle's stream; those that return host values wait for it.
/// The handle is `Send` but not `Sync`: use one per thread (they share the device's primary
/// context).
pub struct Gpu {
    /// Kernel handles by name, looked up once. Declared before `module` so they drop first;
    /// the `'static` stands for "as long as `module`" (see `launch`).
    functions: RefCell<HashMap<String, Function<'static>>>,
    /// Resident blocks per SM by (entry point, block size), from the occupancy calculator.
    occupancy: RefCell<HashMap<(String, u32), u32>>,
    /// `ladder::ladder_names()`, so that a ladder launch formats nothing.
    pub(crate) ladder_names: Vec<String>,
    pub(crate) module: Module,
    pub(crate) stream: Stream,
    pub(crate) workspace: RefCell<Workspace>,
    name: String,
    sm_count: u32,
    max_threads_per_sm: u32,
    l2_bytes: usize,
    compute_capability: (u32, u32),
    image: LoadedImage,
    context: Context,
}

impl Gpu {
    /// Opens device `ordinal` and loads the image of `images` that `choice` picks for it
    /// ([`KernelImages::pick`]). `Error::NoDevice` where there is no device,
    /// `Error::UnsupportedDevice` below compute capability 8.0.
    pub fn new(images: &KernelImages, ordinal: u32, choice: ImageChoice) -> Result<Gpu> {
        cust::init(cust::CudaFlags::empty()).check("cuInit")?;
        if Device::num_devices().check("cuDeviceGetCount")? <= ordinal {
            return Err(Error::NoDevice);
        }
        let device = Device::get_device(ordinal).check("cuDeviceGet")?;
        let context = Context::new(device).check("cuDevicePrimaryCtxRetain")?;
        CurrentContext::set_current(&context).check("cuCtxSetCurrent")?;
        let attr = |a| device.get_attribute(a).check("cuDeviceGetAttribute");
        let (major, minor) = (
            attr(DeviceAttribute::ComputeCapabilityMajor)? as u32,
            attr(DeviceAttribute::ComputeCapabilityMinor)? as u32,
        );
        let image = images
            .pick(choice, major, minor)
            .ok_or(Error::UnsupportedDevice { compute_capability: (major, minor), minimum: MIN_COMPUTE_CAPABILITY })?;
        let module = match image {
            LoadedImage::Cubin { sm } => {
                Module::from_cubin(images.cubin(sm).expect("a picked cubin"), &[]).check("cuModuleLoadData")?
            }
            LoadedImage::Ptx => Module::from_ptx(images.ptx, &[]).check("cuModuleLoadData")?,
        };
        let stream = Stream::new(StreamFlags::NON_BLOCKING, None).check("cuStreamCreate")?;
        let sm_count = attr(DeviceAttribute::MultiprocessorCount)? as u32;
        let max_threads_per_sm = attr(DeviceAttribute::MaxThreadsPerMultiprocessor)? as u32;
        let l2_bytes = attr(DeviceAttribute::L2CacheSize)? as usize;
        let counter = alloc_zeroed(1)?;
        let workspace = RefCell::new(Workspace { partials: alloc(1024)?, counter, flagged: alloc_zeroed(1024)? });
        Ok(Gpu {
            functions: RefCell::new(HashMap::new()),
            occupancy: RefCell::new(HashMap::new()),
            ladder_names: ladder_names(),
            module,
            stream,
            workspace,
            name: device.name().check("cuDeviceGetName")?,
            sm_count,
            max_threads_per_sm,
            l2_bytes,
            compute_capability: (major, minor),
            image,
            context,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }
    pub fn max_threads_per_sm(&self) -> u32 {
        self.max_threads_per_sm
    }
    pub fn l2_bytes(&self) -> usize {
        self.l2_bytes
    }
    /// (major, minor).
    pub fn compute_capability(&self) -> (u32, u32) {
        self.compute_capability
    }
    /// The kernel image this handle loaded.
    pub fn image(&self) -> LoadedImage {
        self.image
    }
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Waits for everything enqueued on this handle's stream; reports kernel faults.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().check("cuStreamSynchronize")
    }

    /// Makes this handle's context current on the calling thread (if it is not already).
    pub(crate) fn bind(&self) -> Result<()> {
        let mut current = std::ptr::null_mut();
        // SAFETY: cuCtxGetCurrent writes one context handle. On failure, set_current reports.
        let ok = unsafe { cust::sys::cuCtxGetCurrent(&mut current) } == cust::sys::CUresult::CUDA_SUCCESS;
        if ok && current == self.context.as_raw() {
            return Ok(());
        }
        CurrentContext::set_current(&self.context).check("cuCtxSetCurrent")
    }

    /// Kernel `name`'s handle, looked up once.
    fn function(&self, name: &str) -> Result<std::cell::RefMut<'_, Function<'static>>> {
        let mut functions = self.functions.borrow_mut();
        if !functions.contains_key(name) {
            let f = self.module.get_function(name).check("cuModuleGetFunction")?;
            // SAFETY: the handle stays in `functions`, which is dropped before `module`.
            let f: Function<'static> = unsafe { std::mem::transmute(f) };
            functions.insert(name.to_string(), f);
        }
        Ok(std::cell::RefMut::map(functions, |f| f.get_mut(name).expect("inserted above")))
    }

    /// Blocks of `block` threads of kernel `name` one SM holds at once (registers and shared
    /// memory included), from the driver's occupancy calculator; cached.
    pub(crate) fn blocks_per_sm(&self, name: &str, block: u32) -> Result<u32> {
        let key = (name.to_string(), block);
        if let Some(&b) = self.occupancy.borrow().get(&key) {
            return Ok(b);
        }
        let blocks = self
            .function(name)?
            .max_active_blocks_per_multiprocessor(BlockSize::x(block), 0)
            .check("cuOccupancyMaxActiveBlocksPerMultiprocessor")?
            .max(1);
        self.occupancy.borrow_mut().insert(key, blocks);
        Ok(blocks)
    }

    /// Launches kernel `name` with the raw argument words `args` (each a `DeviceCopy` value).
    pub(crate) fn launch(&self, name: &str, grid: u32, block: u32, args: &[&dyn KernelArg]) -> Result<()> {
        assert!(args.len() <= MAX_KERNEL_ARGS, "{} takes more than {} parameters", name, MAX_KERNEL_ARGS);
        let function = self.function(name)?;
        let mut ptrs = [std::ptr::null_mut(); MAX_KERNEL_ARGS];
        for (p, a) in ptrs.iter_mut().zip(args) {
            *p = a.as_arg_ptr();
        }
        // SAFETY: the callers pass exactly the kernel's parameters, in order, with device
        // pointers they validated; the launch result is checked, faults surface at the next sync.
        unsafe { self.stream.launch(&function, GridSize::x(grid), BlockSize::x(block), 0, &ptrs[..args.len()]) }
            .check("cuLaunchKernel")
    }

    /// A device pointer to `bytes` of scratch for per-block partials, grown as needed.
    pub(crate) fn partials(&self, bytes: usize) -> Result<u64> {
        let mut ws = self.workspace.borrow_mut();
        self.grown(&mut ws.partials, (bytes + 7) / 8, alloc)
    }

    /// A device pointer to `slots` zeroed 64-bit slots for `finish::FLAGGED` (kernels leave
    /// them zero), grown as needed.
    pub(crate) fn flagged_slots(&self, slots: usize) -> Result<u64> {
        let mut ws = self.workspace.borrow_mut();
        self.grown(&mut ws.flagged, slots, alloc_zeroed)
    }

    /// `buffer`'s device pointer once it holds `words`: a smaller one is replaced by a new
    /// `allocate(next power of two)`.
    fn grown(
        &self,
        buffer: &mut DeviceBuffer<u64>,
        words: usize,
        allocate: fn(usize) -> Result<DeviceBuffer<u64>>,
    ) -> Result<u64> {
        if buffer.len() < words {
            self.synchronize()?; // the old buffer may still be in use by queued kernels
            *buffer = allocate(words.next_power_of_two())?;
        }
        Ok(buffer.as_device_ptr().as_raw())
    }

    /// Waits for this handle's stream, then copies `src[..len]` to the host. (Copies run on the
    /// legacy stream, which does not wait for the non-blocking stream by itself.)
    pub(crate) fn read_back<T: DeviceCopy + Default + Copy>(&self, src: &DeviceSlice<T>, len: usize) -> Result<Vec<T>> {
        let mut host = vec![T::default(); len];
        self.synchronize()?;
        src.index(..len).copy_to(&mut host[..]).check("cuMemcpyDtoH")?;
        Ok(host)
    }

    /// Enqueues `out[0] = 0` (the result of a sum over nothing, or the start of an atomic sum).
    pub(crate) fn zero_first<T: DeviceCopy + bytemuck::Zeroable>(&self, out: &mut DeviceSlice<T>) -> Result<()> {
        self.bind()?;
        // SAFETY: callers checked that `out` holds at least one element.
        unsafe { out.index(..1).set_zero_async(&self.stream) }.check("cuMemsetD8Async")
    }

    pub(crate) fn counter(&self) -> u64 {
        self.workspace.borrow().counter.as_device_ptr().as_raw()
    }
}

/// Most parameters any kernel takes (sgemv's `&[f32]`s count two each).
const MAX_KERNEL_ARGS: usize = 16;

/// A value passed to a kernel by address (cust's launch convention).
pub(crate) trait KernelArg {
    fn as_arg_ptr(&self) -> *mut std::ffi::c_void;
}
impl<T: DeviceCopy> KernelArg for T {
    fn as_arg_ptr(&self) -> *mut std::ffi::c_void {
        self as *const T as *mut std::ffi::c_void
    }
}

/// The device address and length of a slice: how a kernel's `&[T]` parameter is passed.
pub(crate) fn raw<T: DeviceCopy>(s: &DeviceSlice<T>) -> (u64, usize) {
    (s.as_device_ptr().as_raw(), s.len())
}

#![cfg_attr(target_os = "cuda", no_std, feature(register_attr, asm, asm_experimental_arch), register_attr(nvvm_internal))]
use cuda_std::prelude::*;

#[kernel]
pub unsafe fn probe(x: &[f32], out: *mut f32) {
    let i = thread::index_1d() as usize;
    if i < x.len() { *out.add(i) = x[i] * 2.0; }
}

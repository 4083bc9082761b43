// The CPU's spin-wait hint, through LLVM's intrinsic (this target is compiled with `-parse-stdlib`; see
// Prefetch.swift): `pause` on x86-64. Nothing elsewhere.
import Swift

/// Tells the CPU the calling thread is polling a memory location: on x86-64 (`pause`) the core then gives
/// its SMT sibling the execution resources and does not speculate loads ahead of the loop. Inlined.
@_transparent
public func spinPause() {
    #if arch(x86_64)
    Builtin.int_x86_sse2_pause()
    #endif
}

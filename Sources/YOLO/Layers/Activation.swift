import YOLOKernels

/// A darknet activation function (linear, leaky, relu, logistic), applied element-wise: one value
/// or a SIMD vector of any width. Defined once, with the kernel families (`YOLOKernels`), so the
/// micro-kernels, the Winograd transforms and the plain loops all compute the same thing.
@_spi(Engine) public typealias Activation = YOLOKernels.Activation

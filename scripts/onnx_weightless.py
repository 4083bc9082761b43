"""onnx_weightless.py IN.onnx OUT.onnx OUT.json: the same fp32 graph without its large weights, for timing onnxruntime
where the transfer size is limited (the device kit, scripts/device-kit.sh). Every initializer of more than 4 kB is saved
as external data to a file that is then deleted (OUT.onnx keeps only the references: ~30 kB); OUT.json lists those
(name, shape, mean and std of the real values). ort_scale.py --init OUT.json hands onnxruntime normal(mean, std) float32
values for them through SessionOptions.add_external_initializers, which replaces them before any graph optimization:
the same fp32 graph, optimized and run as with the real weights (fp32 kernels' time does not depend on the values;
handed the real values instead, it gives the real model's outputs exactly). The outputs are meaningless: timing only."""
import json, os, sys
import numpy as np, onnx
from onnx import numpy_helper
src, dst, meta = sys.argv[1:4]
m = onnx.load(src)
real = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
side = os.path.basename(dst) + '.weights'
onnx.save_model(m, dst, save_as_external_data=True, all_tensors_to_one_file=True, location=side, size_threshold=4097)
os.remove(os.path.join(os.path.dirname(os.path.abspath(dst)), side))
out = []
for init in onnx.load(dst, load_external_data=False).graph.initializer:
    if init.data_location == onnx.TensorProto.EXTERNAL:
        a = real[init.name]
        assert a.dtype == np.float32, (init.name, a.dtype)
        out.append(dict(name=init.name, shape=list(a.shape), mean=float(a.mean()), std=float(a.std())))
json.dump(out, open(meta, 'w'), indent=0)
print(f'{dst}: {os.path.getsize(dst)} bytes, {len(out)} weights left out ({sum(int(np.prod(e["shape"])) for e in out)} values)')

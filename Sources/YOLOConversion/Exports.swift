// `import YOLOConversion` is enough to use it: its API takes and returns the YOLO module's types (`Detector`, `Image`,
// `Model`, `Detection`), which every example of it needs.
@_exported import YOLO

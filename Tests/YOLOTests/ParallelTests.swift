import Testing
@testable import YOLO

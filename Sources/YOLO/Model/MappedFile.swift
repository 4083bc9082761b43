#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A whole file mapped read-only into memory (`mmap`, `PROT_READ`, `MAP_PRIVATE`, `MAP_POPULATE`:
/// the loader reads every byte for the checksum anyway, and populating in one call is cheaper
/// than one page fault per page).
///
/// Buffers that borrow from the mapping keep this object alive as their owner; the mapping is
/// removed when the last of them goes. Pages are read from the file on first touch and can be
/// dropped by the kernel under memory pressure, so mapped weights cost no private memory.
final class MappedFile: @unchecked Sendable {
    /// First byte of the mapping (page aligned).
    let base: UnsafeRawPointer
    /// Bytes mapped: the file's size when it was opened (0 for an empty file, which maps nothing).
    let count: Int

    /// Maps the file at `path`.
    ///
    /// - Throws: `YOLOError.fileNotFound`, or `.unreadableFile` for a directory, or an I/O error.
    init(path: String) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { throw YOLOError.fileNotFound(path: path) }
            throw YOLOError.unreadableFile(path: path, reason: String(cString: strerror(code)))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw YOLOError.unreadableFile(path: path, reason: String(cString: strerror(errno)))
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw YOLOError.unreadableFile(path: path, reason: "not a regular file")
        }
        let size = Int(status.st_size)
        guard size > 0 else {
            base = UnsafeRawPointer(MappedFile.emptyByte)
            count = 0
            return
        }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, descriptor, 0), address != MAP_FAILED else {
            throw YOLOError.unreadableFile(path: path, reason: "cannot map: \(String(cString: strerror(errno)))")
        }
        base = UnsafeRawPointer(address)
        count = size
    }

    deinit {
        if count > 0 { munmap(UnsafeMutableRawPointer(mutating: base), count) }
    }

    /// Where an empty file's zero bytes "are".
    private nonisolated(unsafe) static let emptyByte = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 64)

    /// The mapped bytes.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
}

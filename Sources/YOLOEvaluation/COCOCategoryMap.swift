import Foundation
@_spi(Engine) import YOLO

/// Which COCO category id each of a model's class indices stands for.
///
/// Two ways to build one:
/// - `standard80`: darknet's 80-class COCO order (coco.names) → the 91-id COCO scheme (1...90 without the
///   10 ids COCO never used: 12, 26, 29, 30, 45, 66, 68, 69, 71, 83), the table darknet's `valid` uses;
/// - `init(classNames:categories:)`: by name, case-insensitively (surrounding spaces ignored), for a
///   custom model whose names file uses the annotation file's category names.
/// `automatic` picks between them.
public struct COCOCategoryMap: Sendable, Equatable {
    /// How the map was made.
    public enum Kind: String, Sendable {
        /// darknet's 80-class COCO table.
        case standard80 = "coco80"
        /// Class names matched against category names.
        case names
    }

    /// `categoryIDs[classIndex]`: the category id, or nil for a class the annotations do not have.
    public let categoryIDs: [Int?]
    /// Names of the classes without a category (reported to the user; their detections are not scored).
    public let unmatchedClasses: [String]
    /// How the map was made.
    public let kind: Kind

    /// darknet's class index (coco.names order) → COCO category id.
    public static let darknetCOCO80: [Int] = Array(1...90).filter { ![12, 26, 29, 30, 45, 66, 68, 69, 71, 83].contains($0) }

    // MARK: Making a map

    /// The standard 80-class table; classes beyond 80 (there should be none) are unmatched.
    public static func standard80(classNames: [String]) -> COCOCategoryMap {
        let ids: [Int?] = classNames.indices.map { $0 < darknetCOCO80.count ? darknetCOCO80[$0] : nil }
        return COCOCategoryMap(categoryIDs: ids, classNames: classNames, kind: .standard80)
    }

    /// Matches each class name with the category of the same name (case-insensitive, trimmed).
    public init(classNames: [String], categories: [COCOCategory]) {
        var byName: [String: Int] = [:]
        for category in categories where byName[Self.normalized(category.name)] == nil {
            byName[Self.normalized(category.name)] = category.id
        }
        self.init(categoryIDs: classNames.map { byName[Self.normalized($0)] }, classNames: classNames, kind: .names)
    }

    /// The standard table when it fits: 80 classes, every standard id among `categories`, and no class whose
    /// name matches a category of a different id than the table gives (so darknet's `motorbike` is fine,
    /// a custom 80-class model in another order is not). Otherwise matching by name.
    public static func automatic(classNames: [String], categories: [COCOCategory]) -> COCOCategoryMap {
        let byName = COCOCategoryMap(classNames: classNames, categories: categories)
        let ids = Set(categories.map(\.id))
        guard classNames.count == darknetCOCO80.count, darknetCOCO80.allSatisfy(ids.contains) else { return byName }
        let consistent = zip(byName.categoryIDs, darknetCOCO80).allSatisfy { named, standard in named == nil || named == standard }
        return consistent ? standard80(classNames: classNames) : byName
    }

    private init(categoryIDs: [Int?], classNames: [String], kind: Kind) {
        self.categoryIDs = categoryIDs
        self.unmatchedClasses = zip(categoryIDs, classNames).filter { $0.0 == nil }.map(\.1)
        self.kind = kind
    }

    // MARK: Lookup

    /// The category id of class `classIndex`, or nil when it has none (or the index is out of range).
    public func categoryID(forClass classIndex: Int) -> Int? {
        categoryIDs.indices.contains(classIndex) ? categoryIDs[classIndex] : nil
    }

    private static func normalized(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}

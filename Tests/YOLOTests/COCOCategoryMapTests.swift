import Foundation
import Testing
@_spi(Engine) @testable import YOLO
@_spi(Engine) @testable import YOLOEvaluation

@Suite struct COCOCategoryMapTests {
    /// The standard table, as printed in darknet's examples/detector.c (`coco_ids`), copied here as data
    /// from the reference tools (shared/reference/yolo_common.py COCO_IDS) to check our derivation.
    static let referenceTable = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 27, 28,
                                 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 46, 47, 48, 49, 50, 51, 52, 53, 54,
                                 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 67, 70, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81,
                                 82, 84, 85, 86, 87, 88, 89, 90]

    static let standardCategories = referenceTable.map { COCOCategory(id: $0, name: "category \($0)") }

    @Test func standardTableMatchesDarknet() {
        #expect(COCOCategoryMap.darknetCOCO80 == Self.referenceTable)
        let map = COCOCategoryMap.standard80(classNames: (0..<80).map { "c\($0)" })
        #expect(map.categoryID(forClass: 0) == 1)
        #expect(map.categoryID(forClass: 79) == 90)
        #expect(map.categoryID(forClass: 80) == nil)
        #expect(map.unmatchedClasses.isEmpty)
    }

    @Test func byNameIsCaseInsensitiveAndReportsUnmatched() {
        let categories = [COCOCategory(id: 7, name: "Hard Hat"), COCOCategory(id: 3, name: "vest")]
        let map = COCOCategoryMap(classNames: ["vest ", "hard hat", "boots"], categories: categories)
        #expect(map.categoryIDs == [3, 7, nil])
        #expect(map.unmatchedClasses == ["boots"])
        #expect(map.kind == .names)
    }

    @Test func automaticPicksTheStandardTableForDarknetNames() {
        var names = (0..<80).map { "class \($0)" }
        names[0] = "person"
        names[3] = "motorbike"  // darknet's name; COCO says motorcycle
        var categories = Self.standardCategories
        categories[0].name = "person"
        categories[3].name = "motorcycle"
        let map = COCOCategoryMap.automatic(classNames: names, categories: categories)
        #expect(map.kind == .standard80)
        #expect(map.categoryID(forClass: 3) == 4)
    }

    @Test func automaticFallsBackToNamesWhenTheOrderDiffers() {
        var names = (0..<80).map { "class \($0)" }
        names[0] = "dog"  // a custom model with 80 classes in another order
        var categories = Self.standardCategories
        categories[16].name = "dog"  // id 18
        let map = COCOCategoryMap.automatic(classNames: names, categories: categories)
        #expect(map.kind == .names)
        #expect(map.categoryID(forClass: 0) == 18)
        // Too few classes for the standard table: by name.
        #expect(COCOCategoryMap.automatic(classNames: ["dog"], categories: categories).categoryIDs == [18])
    }
}

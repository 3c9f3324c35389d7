import Foundation
import Testing

/// Every code block of `README.md` and `Documentation/*.md` is marked, and every marked block is what
/// the repository compiles: drift between the documentation and `Examples/` fails here.
@Suite struct DocumentationMarkerTests {
    static let blocks: [DocumentationBlock] = (try? DocumentationBlock.all(in: ExampleProducts.repositoryRoot)) ?? []

    @Test func documentationFilesAreRead() throws {
        let blocks = try DocumentationBlock.all(in: ExampleProducts.repositoryRoot)
        #expect(blocks.contains { $0.file == "README.md" && $0.marker == .example("HelloData") })
    }

    @Test func everyBlockHasAMarker() {
        let unmarked = Self.blocks.filter { $0.marker == nil }.map(\.description)
        #expect(unmarked == [], "blocks without an <!-- example|output|source|fragment: … --> line before them")
    }

    @Test func sourceBlocksAppearVerbatimInTheirFiles() throws {
        var missing: [String] = []
        for block in Self.blocks {
            guard case .source(let path)? = block.marker else { continue }
            let text = (try? ExampleProducts.source(path)) ?? ""
            if !VerbatimSearch.contains(text, block: block.text) { missing.append("\(block) is not in \(path)") }
        }
        #expect(missing == [])
    }

    @Test func swiftExamplesAppearVerbatimInTheirTargets() throws {
        var missing: [String] = []
        for block in Self.blocks where block.language == "swift" {
            guard case .example(let name)? = block.marker else { continue }
            let sources = (try? ExampleProducts.exampleSources(name)) ?? []
            if !sources.contains(where: { VerbatimSearch.contains($0.text, block: block.text) }) {
                missing.append("\(block) is not in a file of Examples/\(name)/")
            }
        }
        #expect(missing == [])
    }

    @Test func everyExampleIsRunAndEveryOutputBelongsToOne() {
        var examples: Set<String> = []
        var outputs: Set<String> = []
        for block in Self.blocks {
            switch block.marker {
            case .example(let name)?: examples.insert(name)
            case .output(let name)?: outputs.insert(name)
            default: break
            }
        }
        #expect(examples == ExampleRunTests.examples && outputs.isSubset(of: examples),
                "documented \(examples.sorted()), outputs \(outputs.sorted()); run by ExampleRunTests \(ExampleRunTests.examples.sorted())")
    }
}

extension DocumentationMarkerTests {
    /// The blocks of example `name` in documentation order, or of one language only.
    static func blocks(of name: String, language: String? = nil) -> [DocumentationBlock] {
        blocks.filter { block in
            (block.marker == .example(name) || block.marker == .output(name)) && (language == nil || block.language == language)
        }
    }

    /// The one block of example `name` in `language`; fails the test unless there is exactly one.
    static func block(of name: String, language: String) throws -> DocumentationBlock {
        let found = blocks(of: name, language: language).filter { $0.marker == .example(name) }
        try #require(found.count == 1, "expected one ```\(language) block of example \(name), found \(found.count)")
        return found[0]
    }

    /// The `<!-- output: name -->` block's text; fails the test when there is none.
    static func output(of name: String) throws -> String {
        let found = blocks.first { $0.marker == .output(name) }
        return try #require(found, "no <!-- output: \(name) --> block").text
    }
}

import Foundation
import Testing
@testable import Courier

@Suite("MIMETypeTable")
struct MIMETypeTableTests {

    @Test("common extensions", arguments: [
        ("html", "text/html"), ("htm", "text/html"), ("txt", "text/plain"), ("json", "application/json"),
        ("xml", "application/xml"), ("css", "text/css"), ("js", "text/javascript"), ("mjs", "text/javascript"),
        ("png", "image/png"), ("jpg", "image/jpeg"), ("jpeg", "image/jpeg"), ("gif", "image/gif"),
        ("webp", "image/webp"), ("svg", "image/svg+xml"), ("pdf", "application/pdf"), ("zip", "application/zip"),
        ("gz", "application/gzip"), ("tgz", "application/gzip"), ("tar", "application/x-tar"),
        ("bz2", "application/x-bzip2"), ("xz", "application/x-xz"), ("zst", "application/zstd"),
        ("7z", "application/x-7z-compressed"), ("mp3", "audio/mpeg"), ("mp4", "video/mp4"), ("wav", "audio/wav"),
        ("ogg", "audio/ogg"), ("webm", "video/webm"), ("csv", "text/csv"), ("md", "text/markdown"),
        ("yaml", "application/yaml"), ("yml", "application/yaml"), ("wasm", "application/wasm"),
        ("woff", "font/woff"), ("woff2", "font/woff2"), ("ttf", "font/ttf"), ("otf", "font/otf"),
        ("swift", "text/x-swift"), ("c", "text/x-c"), ("h", "text/x-c"), ("py", "text/x-python"),
        ("sh", "application/x-sh"), ("ico", "image/vnd.microsoft.icon"),
    ])
    func known(pathExtension: String, mimeType: String) {
        #expect(MIMETypeTable.mimeType(forPathExtension: pathExtension) == mimeType)
    }

    @Test("look-up ignores case")
    func caseInsensitive() {
        #expect(MIMETypeTable.mimeType(forPathExtension: "PNG") == "image/png")
        #expect(MIMETypeTable.mimeType(forPathExtension: "Json") == "application/json")
        #expect(MIMETypeTable.mimeType(forPathExtension: "HTML") == "text/html")
    }

    @Test("unknown or empty extensions fall back to application/octet-stream")
    func fallback() {
        #expect(MIMETypeTable.mimeType(forPathExtension: "") == "application/octet-stream")
        #expect(MIMETypeTable.mimeType(forPathExtension: "nosuchext") == "application/octet-stream")
        #expect(MIMETypeTable.mimeType(forPathExtension: ".png") == "application/octet-stream")
    }

    @Test("never guesses a text encoding")
    func encoding() {
        #expect(MIMETypeTable.textEncodingName(forMIMEType: "text/html") == nil)
        #expect(MIMETypeTable.textEncodingName(forMIMEType: "application/json") == nil)
    }
}

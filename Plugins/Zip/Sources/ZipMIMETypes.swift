import Foundation

/// MIME types for entry names, by extension.
enum ZipMIMETypes {
    private static let table: [String: String] = [
        "txt": "text/plain", "text": "text/plain", "md": "text/markdown", "csv": "text/csv",
        "html": "text/html", "htm": "text/html", "css": "text/css", "js": "text/javascript",
        "json": "application/json", "xml": "application/xml", "pdf": "application/pdf",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "svg": "image/svg+xml", "zip": "application/zip", "class": "application/java-vm",
    ]

    /// The MIME type for `name`'s extension; `application/octet-stream` when unknown.
    static func mimeType(forName name: String) -> String {
        let ext = (name as NSString).pathExtension.lowercased()
        return table[ext] ?? "application/octet-stream"
    }

    /// Whether a MIME type is text, so a charset is worth stating.
    static func isText(_ mimeType: String) -> Bool {
        mimeType.hasPrefix("text/") || mimeType == "application/json" || mimeType == "application/xml"
    }
}

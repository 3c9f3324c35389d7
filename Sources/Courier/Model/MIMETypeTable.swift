import Foundation

/// Maps file name extensions to MIME types, for responses that do not come with a `Content-Type`
/// (`file:` URLs, `data:` URLs without a type, local handlers).
internal enum MIMETypeTable {

    /// The type used when an extension is unknown.
    internal static let fallback = "application/octet-stream"

    /// Returns the MIME type for a path extension (without the dot, compared case-insensitively),
    /// or `"application/octet-stream"` when the extension is unknown or empty.
    internal static func mimeType(forPathExtension pathExtension: String) -> String {
        guard !pathExtension.isEmpty else { return fallback }
        return types[HTTPHeaderFields.key(for: pathExtension)] ?? fallback
    }

    /// Returns the text encoding name to report for `mimeType`. Courier never guesses an encoding
    /// that the source did not state, so this is always `nil`.
    internal static func textEncodingName(forMIMEType mimeType: String) -> String? {
        nil
    }

    /// Lowercased extension → MIME type.
    private static let types: [String: String] = [
        // Text and documents
        "html": "text/html",
        "htm": "text/html",
        "shtml": "text/html",
        "xhtml": "application/xhtml+xml",
        "txt": "text/plain",
        "text": "text/plain",
        "log": "text/plain",
        "conf": "text/plain",
        "ini": "text/plain",
        "md": "text/markdown",
        "markdown": "text/markdown",
        "csv": "text/csv",
        "tsv": "text/tab-separated-values",
        "css": "text/css",
        "js": "text/javascript",
        "mjs": "text/javascript",
        "cjs": "text/javascript",
        "ts": "video/mp2t",
        "json": "application/json",
        "jsonld": "application/ld+json",
        "map": "application/json",
        "geojson": "application/geo+json",
        "ndjson": "application/x-ndjson",
        "xml": "application/xml",
        "xsl": "application/xml",
        "xsd": "application/xml",
        "dtd": "application/xml-dtd",
        "rss": "application/rss+xml",
        "atom": "application/atom+xml",
        "yaml": "application/yaml",
        "yml": "application/yaml",
        "toml": "application/toml",
        "ics": "text/calendar",
        "vcf": "text/vcard",
        "rtf": "application/rtf",
        "pdf": "application/pdf",
        "ps": "application/postscript",
        "eps": "application/postscript",
        "tex": "application/x-tex",
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text",
        "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "odp": "application/vnd.oasis.opendocument.presentation",
        "epub": "application/epub+zip",
        "wasm": "application/wasm",
        "plist": "application/x-plist",
        "webmanifest": "application/manifest+json",

        // Source code (served as text)
        "swift": "text/x-swift",
        "c": "text/x-c",
        "h": "text/x-c",
        "cc": "text/x-c++",
        "cpp": "text/x-c++",
        "cxx": "text/x-c++",
        "hpp": "text/x-c++",
        "m": "text/x-objcsrc",
        "java": "text/x-java-source",
        "kt": "text/x-kotlin",
        "go": "text/x-go",
        "rs": "text/x-rust",
        "py": "text/x-python",
        "rb": "text/x-ruby",
        "pl": "text/x-perl",
        "php": "application/x-httpd-php",
        "sh": "application/x-sh",
        "bash": "application/x-sh",
        "zsh": "application/x-sh",
        "sql": "application/sql",
        "diff": "text/x-diff",
        "patch": "text/x-diff",

        // Images
        "png": "image/png",
        "apng": "image/apng",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "jpe": "image/jpeg",
        "gif": "image/gif",
        "webp": "image/webp",
        "avif": "image/avif",
        "heic": "image/heic",
        "heif": "image/heif",
        "svg": "image/svg+xml",
        "svgz": "image/svg+xml",
        "ico": "image/vnd.microsoft.icon",
        "bmp": "image/bmp",
        "tif": "image/tiff",
        "tiff": "image/tiff",
        "psd": "image/vnd.adobe.photoshop",
        "jxl": "image/jxl",

        // Audio
        "mp3": "audio/mpeg",
        "m4a": "audio/mp4",
        "aac": "audio/aac",
        "wav": "audio/wav",
        "ogg": "audio/ogg",
        "oga": "audio/ogg",
        "opus": "audio/opus",
        "flac": "audio/flac",
        "mid": "audio/midi",
        "midi": "audio/midi",
        "aif": "audio/aiff",
        "aiff": "audio/aiff",
        "weba": "audio/webm",

        // Video
        "mp4": "video/mp4",
        "m4v": "video/mp4",
        "mov": "video/quicktime",
        "webm": "video/webm",
        "ogv": "video/ogg",
        "avi": "video/x-msvideo",
        "mkv": "video/x-matroska",
        "mpeg": "video/mpeg",
        "mpg": "video/mpeg",
        "3gp": "video/3gpp",
        "m3u8": "application/vnd.apple.mpegurl",

        // Fonts
        "woff": "font/woff",
        "woff2": "font/woff2",
        "ttf": "font/ttf",
        "otf": "font/otf",
        "eot": "application/vnd.ms-fontobject",

        // Archives and compressed data
        "zip": "application/zip",
        "gz": "application/gzip",
        "tgz": "application/gzip",
        "tar": "application/x-tar",
        "bz2": "application/x-bzip2",
        "xz": "application/x-xz",
        "zst": "application/zstd",
        "lz": "application/x-lzip",
        "lzma": "application/x-lzma",
        "br": "application/x-brotli",
        "7z": "application/x-7z-compressed",
        "rar": "application/vnd.rar",
        "jar": "application/java-archive",
        "deb": "application/vnd.debian.binary-package",
        "rpm": "application/x-rpm",
        "dmg": "application/x-apple-diskimage",
        "iso": "application/x-iso9660-image",
        "apk": "application/vnd.android.package-archive",

        // Binaries and data
        "bin": "application/octet-stream",
        "exe": "application/vnd.microsoft.portable-executable",
        "so": "application/octet-stream",
        "o": "application/octet-stream",
        "dll": "application/vnd.microsoft.portable-executable",
        "sqlite": "application/vnd.sqlite3",
        "db": "application/octet-stream",
        "pem": "application/x-pem-file",
        "crt": "application/x-x509-ca-cert",
        "cer": "application/pkix-cert",
        "der": "application/x-x509-ca-cert",
        "p12": "application/x-pkcs12",
        "pfx": "application/x-pkcs12",
    ]
}

// README.md, directory listings. CourierExampleTests checks that the README shows this code verbatim
// and runs it in a directory of known contents.
import Foundation
import Courier

let here = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
let (entries, _) = try await URLSession.shared.directoryListing(from: here)
for entry in entries { print(entry.type, entry.size ?? -1, entry.name) }

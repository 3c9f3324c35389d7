// README.md, "A minimal example". CourierExampleTests checks that the README shows this code verbatim
// and that running it prints what the README says it prints.
import Foundation
import Courier

let url = URL(string: "data:text/plain;charset=utf-8,Hello%2C%20Courier")!
let (data, response) = try await URLSession.shared.data(from: url)
print(response.mimeType ?? "-", String(decoding: data, as: UTF8.self))

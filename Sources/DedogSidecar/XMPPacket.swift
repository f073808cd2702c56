import CExempi
import CSidecar

/// The XMP namespaces dedog reads or writes, with the prefixes the photo managers use for them.
public enum XMPNamespace {
    /// Dublin Core: `dc:subject`, the flat keywords every reader knows.
    public static let dublinCore = "http://purl.org/dc/elements/1.1/"
    /// Lightroom: `lr:hierarchicalSubject`, paths with `|` (darktable's first choice, Immich's second).
    public static let lightroom = "http://ns.adobe.com/lightroom/1.0/"
    /// digiKam: `digiKam:TagsList`, paths with `/` (what digiKam and Immich read first).
    public static let digiKam = "http://www.digikam.org/ns/1.0/"
    /// Windows Photo Gallery: `MicrosoftPhoto:LastKeywordXMP`, paths with `/` (digiKam's second choice).
    public static let microsoftPhoto = "http://ns.microsoft.com/photo/1.0/"
    /// dedog's own record of what it wrote (a namespace name, not a web page).
    public static let dedog = "http://ns.dedog.org/xmp/1.0/"

    static let prefixes = [(digiKam, "digiKam"), (microsoftPhoto, "MicrosoftPhoto"), (lightroom, "lr"), (dedog, "dedog")]
}

/// Exempi's start, once per process, with the namespaces it does not know registered under the prefixes the
/// managers use; every exempi call runs inside `quietly` (see `sidecar_support.h`).
enum XMPLibrary {
    static let ready: Bool = quietly {
        guard xmp_init() else { return false }
        let registered = xmp_string_new()
        defer { xmp_string_free(registered) }
        return XMPNamespace.prefixes.allSatisfy { xmp_register_namespace($0.0, $0.1, registered) }
    }

    static func quietly<T>(_ body: () -> T) -> T {
        dedog_xmp_quiet_begin()
        defer { dedog_xmp_quiet_end() }
        return body()
    }
}

/// One XMP packet in memory, parsed and written by exempi. Not for sharing between threads: each sidecar is
/// read, changed and written by one.
final class XMPPacket {
    /// An array's form, as XMP has them: a bag (unordered), a sequence (ordered).
    enum Form: UInt32 {
        case bag = 0x200
        case sequence = 0x600
    }

    private let xmp: XmpPtr

    /// The packet in `bytes` (with or without the `<?xpacket` wrapper); nil when they are not XMP.
    init?(parsing bytes: [UInt8]) {
        guard XMPLibrary.ready else { return nil }
        let parsed: XmpPtr? = XMPLibrary.quietly {
            bytes.withUnsafeBufferPointer { buffer in
                buffer.baseAddress.flatMap { base in
                    base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { xmp_new($0, buffer.count) }
                }
            }
        }
        guard let parsed else { return nil }
        xmp = parsed
    }

    /// An empty packet; nil only when exempi cannot start.
    init?() {
        guard XMPLibrary.ready, let empty = XMPLibrary.quietly({ xmp_new_empty() }) else { return nil }
        xmp = empty
    }

    deinit { XMPLibrary.quietly { _ = xmp_free(xmp) } }

    /// The items of the array `name`, with its form; nil when there is no such property. A property that is not
    /// an array counts as one item.
    func items(_ namespace: String, _ name: String) -> (values: [String], form: Form)? {
        XMPLibrary.quietly {
            let value = xmp_string_new()
            defer { xmp_string_free(value) }
            var bits: UInt32 = 0
            guard xmp_get_property(xmp, namespace, name, value, &bits) else { return nil }
            guard bits & Form.bag.rawValue != 0 else { return ([String(cString: xmp_string_cstr(value))], .bag) }
            var values: [String] = []
            var index: Int32 = 1
            while xmp_get_array_item(xmp, namespace, name, index, value, &bits) {
                values.append(String(cString: xmp_string_cstr(value)))
                index += 1
            }
            return (values, bits & Form.sequence.rawValue == Form.sequence.rawValue ? .sequence : .bag)
        }
    }

    /// Makes `name` the array `values` in `form`; deletes it when `values` is empty.
    @discardableResult
    func setItems(_ namespace: String, _ name: String, _ values: [String], form: Form) -> Bool {
        XMPLibrary.quietly {
            _ = xmp_delete_property(xmp, namespace, name)
            var first = true
            for value in values {
                guard xmp_append_array_item(xmp, namespace, name, first ? form.rawValue : 0, value, 0) else { return false }
                first = false
            }
            return true
        }
    }

    func text(_ namespace: String, _ name: String) -> String? {
        XMPLibrary.quietly {
            let value = xmp_string_new()
            defer { xmp_string_free(value) }
            var bits: UInt32 = 0
            guard xmp_get_property(xmp, namespace, name, value, &bits), bits & Form.bag.rawValue == 0 else { return nil }
            return String(cString: xmp_string_cstr(value))
        }
    }

    @discardableResult
    func setText(_ namespace: String, _ name: String, _ value: String?) -> Bool {
        XMPLibrary.quietly {
            guard let value else {
                _ = xmp_delete_property(xmp, namespace, name)
                return true
            }
            return xmp_set_property(xmp, namespace, name, value, 0)
        }
    }

    /// Whether the packet holds any property outside `namespace`.
    func hasProperties(outside namespace: String) -> Bool {
        XMPLibrary.quietly {
            guard let iterator = xmp_iterator_new(xmp, nil, nil, XmpIterOptions(0x0100)) else { return true }
            defer { xmp_iterator_free(iterator) }
            let schema = xmp_string_new(), name = xmp_string_new(), value = xmp_string_new()
            defer { xmp_string_free(schema); xmp_string_free(name); xmp_string_free(value) }
            var bits: UInt32 = 0
            // The top level holds one node per namespace in use: a namespace of its own means a property.
            while xmp_iterator_next(iterator, schema, name, value, &bits) {
                if String(cString: xmp_string_cstr(schema)) != namespace { return true }
            }
            return false
        }
    }

    /// The packet as a sidecar file holds it: an XML declaration, then `<x:xmpmeta>` without the packet wrapper
    /// (as darktable writes its sidecars; Exiv2 accepts either).
    func serialized() -> [UInt8]? {
        XMPLibrary.quietly {
            let buffer = xmp_string_new()
            defer { xmp_string_free(buffer) }
            guard xmp_serialize(xmp, buffer, 0x0010, 0) else { return nil }
            return Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n".utf8)
                + Array(UnsafeBufferPointer(start: xmp_string_cstr(buffer), count: xmp_string_len(buffer))).map { UInt8(bitPattern: $0) }
        }
    }
}

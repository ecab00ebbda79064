package import CXML
import FeedSyncModel
import Foundation

/// Reading a tree libxml2 built: its elements depth first, without recursion (a hostile document
/// may nest deeply), their names and attributes as bounded strings.
package enum XMLTree {
    package struct Element {
        package let node: UnsafeMutablePointer<xmlNode>

        package init(node: UnsafeMutablePointer<xmlNode>) {
            self.node = node
        }

        /// The name in lower case (HTML and OPML writers differ in case).
        package var name: String { node.pointee.name.map(XMLTree.lowercased) ?? "" }

        /// The attribute named so (given in lower case), letter case aside; nil when absent or
        /// longer than `FeedLimits.urlBytes`.
        package subscript(_ name: String) -> String? {
            var property = node.pointee.properties
            while let current = property {
                if let candidate = current.pointee.name, XMLTree.equal(candidate, lowercased: name) {
                    let value = XMLTree.value(of: current)
                    return value.utf8.count <= FeedLimits.urlBytes ? value : nil
                }
                property = current.pointee.next
            }
            return nil
        }
    }

    /// A name libxml2 read, in lower case; without a copy to lower when it is already (as the
    /// HTML parser leaves tag and attribute names).
    package static func lowercased(_ name: UnsafePointer<UInt8>) -> String {
        var index = 0
        while name[index] != 0 {
            if name[index] >= 0x41 && name[index] <= 0x5A || name[index] >= 0x80 {
                return String(cString: name).lowercased()
            }
            index += 1
        }
        return String(cString: name)
    }

    /// Whether libxml2's `name` is `lowercased` (in lower case), ASCII letter case aside.
    package static func equal(_ name: UnsafePointer<UInt8>, lowercased: String) -> Bool {
        var index = 0
        for byte in lowercased.utf8 {
            let other = name[index]
            guard other != 0, other == byte || (other >= 0x41 && other <= 0x5A && other | 0x20 == byte) else {
                return false
            }
            index += 1
        }
        return name[index] == 0
    }

    /// An attribute's value: the text of its children.
    package static func value(of attribute: UnsafeMutablePointer<xmlAttr>) -> String {
        var value = ""
        var child = attribute.pointee.children
        while let part = child {
            if let content = part.pointee.content { value += String(cString: content) }
            child = part.pointee.next
        }
        return value
    }

    /// Calls `enter` for each element in document order, `text` for each run of text (and CDATA)
    /// in it, and `leave` after its children. `enter` returning false skips the element's children.
    package static func walk(
        _ document: UnsafeMutablePointer<xmlDoc>, enter: (Element) -> Bool,
        text: (UnsafePointer<UInt8>) -> Void = { _ in },
        leave: (Element) -> Void
    ) {
        var stack: [UnsafeMutablePointer<xmlNode>] = []
        var node = document.pointee.children
        while true {
            guard let current = node else {
                guard let parent = stack.popLast() else { break }
                leave(Element(node: parent))
                node = parent.pointee.next
                continue
            }
            guard current.pointee.type == XML_ELEMENT_NODE else {
                if current.pointee.type == XML_TEXT_NODE || current.pointee.type == XML_CDATA_SECTION_NODE,
                    let content = current.pointee.content
                {
                    text(content)
                }
                node = current.pointee.next
                continue
            }
            if enter(Element(node: current)), let child = current.pointee.children {
                stack.append(current)
                node = child
            } else {
                leave(Element(node: current))
                node = current.pointee.next
            }
        }
    }
}

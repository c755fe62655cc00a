"""Prints the calls a python-dbusmock object recorded, as one JSON document on stdout.

Usage: /usr/bin/python3 mock-calls.py BUS_ADDRESS BUS_NAME OBJECT_PATH [clear]
Output: [{"time": <unix s>, "method": "<name>", "args": [...]}, ...]; with "clear": ClearCalls, prints [].
D-Bus values become plain JSON: strings stay strings (byte for byte, through JSON escapes), bytes and
integers become numbers, booleans booleans, arrays and structs lists, dicts objects.
"""
import json
import sys

import dbus


def plain(v):
    if isinstance(v, dbus.Boolean):
        return bool(v)
    if isinstance(v, (dbus.String, dbus.ObjectPath, dbus.Signature, str)):
        return str(v)
    if isinstance(v, (dbus.Byte, dbus.Int16, dbus.Int32, dbus.Int64, dbus.UInt16, dbus.UInt32, dbus.UInt64, int)):
        return int(v)
    if isinstance(v, (dbus.Double, float)):
        return float(v)
    if isinstance(v, (dbus.ByteArray, bytes)):
        return list(bytes(v))
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return repr(v)


def main():
    address, name, path = sys.argv[1], sys.argv[2], sys.argv[3]
    bus = dbus.bus.BusConnection(address)
    mock = dbus.Interface(bus.get_object(name, path), "org.freedesktop.DBus.Mock")
    if len(sys.argv) > 4 and sys.argv[4] == "clear":
        mock.ClearCalls()
        print("[]")
        return
    calls = [{"time": int(t), "method": str(m), "args": plain(list(a))} for (t, m, a) in mock.GetCalls()]
    sys.stdout.write(json.dumps(calls, ensure_ascii=True))
    sys.stdout.write("\n")


main()

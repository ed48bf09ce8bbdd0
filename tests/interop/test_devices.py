"""Devices and events from Python (issue 22, point 6), on the Vulkan
backend (Mesa's lavapipe in CI, scripts/deps.sh vulkan): device listing and
info, an EVENT export recorded through the backend, refused by DLPack until
acquired (BP-SYNC-WAIT) or handed on with a stream that is made to wait on
it; events released exactly once; an EVENT handoff alive at interpreter
exit."""
import subprocess
import sys
import unittest

import hurray

VK = hurray.DEVICE_VULKAN


class Devices(unittest.TestCase):
    def test_listing_and_info(self):
        found = hurray.devices()
        self.assertEqual(found.get("CPU"), 1)
        self.assertGreaterEqual(found.get("VULKAN", 0), 1, found)
        info = hurray.device_info(VK)
        self.assertTrue(info["name"])
        self.assertTrue(info["memory_classes"] & (1 << hurray.MEMORY_STANDARD))
        with self.assertRaises(hurray.HurrayError):
            hurray.device_info(VK, 1000)


class Events(unittest.TestCase):
    def test_an_event_export_is_acquired_then_handed_on(self):
        buf = hurray.Buffer.alloc(1 << 16, alignment=4096, device_tag=VK)
        h = buf.export(event=True)
        self.assertEqual(h.handle.sync_mode, hurray.SYNC_EVENT)
        h.check()
        with self.assertRaises(BufferError) as cm:
            h.__dlpack__(stream=-1)  # no synchronisation asked: DLPack carries no event
        self.assertEqual(cm.exception.rule_id, "BP-SYNC-WAIT")
        h.acquire()  # the host waits on the event, which is released once
        with self.assertRaises(hurray.HurrayError) as cm:
            h.release_event()
        self.assertEqual(cm.exception.status_name, "HURRAY_E_ALREADY_RELEASED")
        cap = h.__dlpack__(stream=1, max_version=(1, 1))
        self.assertTrue(h.released)
        back = hurray.from_dlpack(cap, stream=1)
        self.assertEqual(back.__dlpack_device__(), (hurray.DL_VULKAN, 0))
        self.assertEqual(back.handle.sync_mode, hurray.SYNC_CONSUMER_STREAM)
        back.release()

    def test_release_event_without_waiting(self):
        buf = hurray.Buffer.alloc(4096, alignment=4096, device_tag=VK)
        h = buf.export(event=True)
        h.release_event()
        with self.assertRaises(hurray.HurrayError):
            h.release_event()  # BP-EVREL-ONCE
        h.release()

    def test_cpu_buffers_have_no_events(self):
        with self.assertRaises(hurray.HurrayError) as cm:
            hurray.Buffer.alloc(64).export(event=True)
        self.assertEqual(cm.exception.rule_id, "BP-SYNC-CPU")

    def test_an_event_handoff_alive_at_exit(self):
        p = subprocess.run([sys.executable, "-c", """
import hurray
buf = hurray.Buffer.alloc(1 << 16, alignment=4096, device_tag=hurray.DEVICE_VULKAN)
h = buf.export(event=True)
cap = buf.__dlpack__(stream=1, max_version=(1, 1))
"""], capture_output=True, text=True, timeout=120)
        self.assertEqual((p.returncode, p.stderr, p.stdout), (0, "", ""))


class StreamWaits(unittest.TestCase):
    """__dlpack__(stream=) of an EVENT handoff on a device: the consumer's
    stream (on Vulkan a VkQueue) is made to wait on the event through the
    backend before the capsule is returned, and the event is released once."""

    def test_the_consumers_queue_waits_then_the_capsule_comes(self):
        queue = hurray.device_native(VK)[3]  # the plugin's VkQueue
        self.assertNotEqual(queue, 0)
        buf = hurray.Buffer.alloc(1 << 16, alignment=4096, device_tag=VK)
        h = buf.export(event=True, stream=queue)
        self.assertEqual(h.handle.sync_mode, hurray.SYNC_EVENT)
        cap = h.__dlpack__(stream=queue, max_version=(1, 1))
        self.assertTrue(h.released)
        with self.assertRaises(hurray.HurrayError) as cm:
            h.release_event()  # acquire released it already
        self.assertEqual(cm.exception.status_name, "HURRAY_E_ALREADY_RELEASED")
        back = hurray.from_dlpack(cap, stream=queue)
        self.assertEqual(back.__dlpack_device__(), (hurray.DL_VULKAN, 0))
        self.assertEqual(back.handle.sync_mode, hurray.SYNC_CONSUMER_STREAM)
        back.release()
        buf.close()


if __name__ == "__main__":
    unittest.main()

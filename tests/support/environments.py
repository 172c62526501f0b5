"""Environments for the tests, given to ``SandboxReplayer`` by name (``ENVIRONMENTS``)."""

from scoring.environments import Environment


class Store(Environment):
    """A key-value store: ``put(key, value)``, ``get(key)``, ``delete(key)``."""

    def __init__(self, initial_state):
        if not isinstance(initial_state, dict):
            raise ValueError("the initial state must be an object of keys")
        self.items = dict(initial_state)

    def execute(self, name, arguments):
        if name == "put":
            self.items[arguments["key"]] = arguments["value"]
            return "ok"
        if name == "get":
            return self.items.get(arguments["key"])
        if name == "delete":
            if arguments["key"] not in self.items:
                raise KeyError(f"no key {arguments['key']!r}")
            del self.items[arguments["key"]]
            return "deleted"
        raise ValueError(f"no tool {name!r}")

    def state(self):
        return self.items


class Looping(Store):
    """Every call loops forever."""

    def execute(self, name, arguments):
        while True:
            pass


class Hungry(Store):
    """Every call allocates memory without bound."""

    def execute(self, name, arguments):
        hoard = []
        while True:
            hoard.append(bytearray(1 << 20))


class Sleeping(Store):
    """Every call waits without using CPU time."""

    def execute(self, name, arguments):
        import time

        time.sleep(3600)


ENVIRONMENTS = {
    name: f"tests.support.environments:{name}"
    for name in ("Store", "Looping", "Hungry", "Sleeping")
}


# A case judged by end state in BFCL's vehicle backend (the installed ``bfcl``
# environment): the driver's door locked, nothing else changed.
VEHICLE_CASE = {
    "key": "doors",
    "environment": {
        "name": "bfcl",
        "initial_state": {"involved_classes": ["VehicleControlAPI"], "initial_config": {}},
    },
    "expectations": [
        {
            "type": "end_state_matches",
            "reference_calls": [
                {"name": "lockDoors", "arguments": {"unlock": False, "door": ["driver"]}}
            ],
        }
    ],
}

package nrt

import (
	"bytes"
	"fmt"
)

// Exercise calls forward entry point index (in dlsym order) through its
// typed function with fixed arguments and describes the answer in one line.
// It exists for test doubles and diagnostics: communicators and handles are
// passed as nil, which a real libnccom would not accept.
func Exercise(index int) (string, error) {
	if index < 0 || index >= len(exercises) {
		return "", fmt.Errorf("forward entry point %d does not exist (0..%d)", index, len(exercises)-1)
	}
	return exercises[index]()
}

func cut(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func done(err error) (string, error) { return "", err }

// exercises[i] calls the function of Forward[i].
var exercises = [NumSlots]func() (string, error){
	func() (string, error) {
		v, err := GetVersionInfo()
		return fmt.Sprintf("version %d.%d.%d.%d-%s compat %d", v.Major, v.Minor, v.Patch, v.Maintenance, cut(v.GitHash[:]), v.CompatibilityVersion), err
	},
	func() (string, error) {
		id, err := GetUniqueID(2, "exercise")
		return fmt.Sprintf("id %q", cut(id[:])), err
	},
	func() (string, error) {
		var dev DeviceInfo
		c, err := InitGlobalComm(0, 1, &dev, "127.0.0.1:1", "exercise")
		return fmt.Sprintf("comm set %v", c != nil), err
	},
	func() (string, error) {
		var id UniqueID
		var dev DeviceInfo
		c, err := InitComm(1, &id, 0, &dev, false)
		return fmt.Sprintf("comm set %v", c != nil), err
	},
	func() (string, error) { return done(BuildGraphComm(nil)) },
	func() (string, error) {
		info, err := GetCommInfo(nil)
		return fmt.Sprintf("cluster_id %d", info.ClusterID), err
	},
	func() (string, error) { return done(FreeComm(nil)) },
	func() (string, error) { return done(ExpandConnectivity(nil, ConnectivityDefault)) },
	func() (string, error) { return done(StartNetworkProxy(nil, 0, 0, nil, 0, nil, 0, nil, 0)) },
	func() (string, error) { return done(StopNetworkProxy(nil, 0)) },
	func() (string, error) {
		p, f, err := NetworkProxyProgress(nil, 0, 0)
		return fmt.Sprintf("progressed %v failed %v", p, f), err
	},
	func() (string, error) { return done(BootstrapSend(nil, 1, []byte("ping"), "exercise")) },
	func() (string, error) { return done(BootstrapRecv(nil, 1, make([]byte, 4), "exercise")) },
	func() (string, error) { return done(BootstrapAllGather(nil, make([]byte, 8), 4, "exercise")) },
	func() (string, error) {
		nic, err := PreferredNcRidNic(0, 0)
		return fmt.Sprintf("nic %d", nic), err
	},
	func() (string, error) {
		bdf, err := PreferredNcRidNicBdf(0, 0)
		return fmt.Sprintf("bdf %q", bdf), err
	},
	func() (string, error) {
		_, err := NetRegMr(nil, 0, 1, true, 0, nil, 0, 0)
		return done(err)
	},
	func() (string, error) { return done(NetDeregMr(nil, 0, 1, true, 0, nil)) },
	func() (string, error) {
		id, err := GetPeerDeviceID(nil, 1)
		return fmt.Sprintf("peer device %d", id), err
	},
	func() (string, error) {
		_, err := SetAffinity(nil, nil, 0)
		return done(err)
	},
	func() (string, error) {
		_, err := GetNetConnector(nil, 0, 1, true)
		return done(err)
	},
	func() (string, error) { return done(InitNet("127.0.0.1:1")) },
	func() (string, error) { return done(FiniPlugin()) },
	func() (string, error) {
		_, err := GetOFIHandle()
		return done(err)
	},
	func() (string, error) {
		_, err := NetListen(0, make([]byte, 128))
		return done(err)
	},
	func() (string, error) {
		_, err := NetConnect(0, make([]byte, 128))
		return done(err)
	},
	func() (string, error) {
		_, err := NetAccept(nil)
		return done(err)
	},
	func() (string, error) {
		_, err := NetRegMrOG(nil, nil, 0, 0)
		return done(err)
	},
	func() (string, error) { return done(NetDeregMrOG(nil, nil)) },
	func() (string, error) {
		k, err := NetGetMrKey(nil)
		return fmt.Sprintf("key %d", k), err
	},
	func() (string, error) {
		_, err := NetIsend(nil, nil, 0, nil)
		return done(err)
	},
	func() (string, error) {
		_, err := NetIrecv(nil, nil, 0, nil)
		return done(err)
	},
	func() (string, error) {
		_, err := NetIflush(nil, nil, 0, nil)
		return done(err)
	},
	func() (string, error) {
		d, n, err := NetTest(nil)
		return fmt.Sprintf("done %v size %d", d, n), err
	},
	func() (string, error) { return done(NetCloseSend(nil)) },
	func() (string, error) { return done(NetCloseRecv(nil)) },
	func() (string, error) { return done(NetCloseListen(nil)) },
}
